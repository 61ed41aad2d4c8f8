import { pipe } from 'fp-ts/function';
import * as TE from 'fp-ts/TaskEither';
import type { DomainError } from '../errors';
import type { Principal } from '../model/principal';
import type { SignatureRequest } from '../model/signature-request';
import type { CursorSigner, ListEnvelope } from '../pagination';
import type { SignatureRequestFilter } from '../ports/signature-request-store';
import type { Stores } from '../ports/stores';
import type { PageRequest } from './list-page';
import { listPage } from './list-page';
import { requireScope } from './policy';

/** A page of the caller's signature requests, optionally by status. */
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
