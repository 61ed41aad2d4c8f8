import { pipe } from 'fp-ts/function';
import * as TE from 'fp-ts/TaskEither';
import type { DomainError } from '../errors';
import type { Principal } from '../model/principal';
import type { SignatureRequest } from '../model/signature-request';
import type { Stores } from '../ports/stores';
import { loadRequest, requireScope } from './policy';

/** One request with its recipients and fields, as its tenant sees it. */
export const getSignatureRequest =
  (deps: { readonly stores: Stores }) =>
  (p: Principal, id: string): TE.TaskEither<DomainError, SignatureRequest> =>
    pipe(
      requireScope(p, 'signature_requests:read'),
      TE.chainW(() => loadRequest(deps.stores, p, id, false)),
    );
