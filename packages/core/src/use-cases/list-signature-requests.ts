import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '../task-either.js';
import type { DomainError } from '../errors.js';
import type { Principal } from '../model/principal.js';
import type { SignatureRequest } from '../model/signature-request.js';
import type { CursorSigner, ListEnvelope } from '../pagination.js';
import type { SignatureRequestFilter } from '../ports/signature-request-store.js';
import type { Stores } from '../ports/stores.js';
import type { PageRequest } from './list-page.js';
import { listPage } from './list-page.js';
import { requireScope } from './policy.js';

/**
 * A page of the caller's signature requests, optionally by status.
 *
 * @example
 * const page = await listSignatureRequests(deps)(me, { limit: 50 }, { status: 'COMPLETED' }, (r) => ({ id: r.id, title: r.title }))();
 * // page.right.pageInfo.nextCursor: pass it as `cursor` for the next page
 */
export const listSignatureRequests =
  (deps: { readonly stores: Stores; readonly cursors: CursorSigner }) =>
  <B>(
    p: Principal,
    page: PageRequest,
    filter: SignatureRequestFilter,
    present: (r: SignatureRequest) => B,
  ): TE.TaskEither<DomainError, ListEnvelope<B>> =>
    pipe(
      requireScope(p, 'signature_requests:read'),
      TE.chainW(() =>
        listPage(
          deps.cursors,
          'signature_requests',
          page,
          filter,
          `status=${filter.status ?? ''}`,
          (q) => deps.stores.signatureRequests.list(p.tenant, q),
          present,
        ),
      ),
    );
