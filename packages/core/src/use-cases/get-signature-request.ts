import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '../task-either.js';
import type { DomainError } from '../errors.js';
import type { Principal } from '../model/principal.js';
import type { SignatureRequest } from '../model/signature-request.js';
import type { Stores } from '../ports/stores.js';
import { loadRequest, requireScope } from './policy.js';

/**
 * One request with its recipients and fields, as its tenant sees it.
 *
 * @example
 * const r = await getSignatureRequest(deps)(me, requestId)();
 * if (E.isRight(r)) console.log(r.right.status, r.right.recipients.map((x) => x.status));
 */
export const getSignatureRequest =
  (deps: { readonly stores: Stores }) =>
  (p: Principal, id: string): TE.TaskEither<DomainError, SignatureRequest> =>
    pipe(
      requireScope(p, 'signature_requests:read'),
      TE.chainW(() => loadRequest(deps.stores, p, id, false)),
    );
