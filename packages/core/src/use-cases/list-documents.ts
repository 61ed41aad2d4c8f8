import { pipe } from 'fp-ts/function';
import * as TE from 'fp-ts/TaskEither';
import type { DomainError } from '../errors';
import type { Document } from '../model/document';
import type { Principal } from '../model/principal';
import type { CursorSigner, ListEnvelope } from '../pagination';
import type { DocumentFilter } from '../ports/document-store';
import type { Stores } from '../ports/stores';
import type { PageRequest } from './list-page';
import { listPage } from './list-page';
import { requireScope } from './policy';

/** A page of the caller's documents, newest first unless asked otherwise, optionally by status. */
export const listDocuments =
  (deps: { readonly stores: Stores; readonly cursors: CursorSigner }) =>
  <B>(p: Principal, page: PageRequest, filter: DocumentFilter, present: (d: Document) => B): TE.TaskEither<DomainError, ListEnvelope<B>> =>
    pipe(
      requireScope(p, 'documents:read'),
      TE.chainW(() =>
        listPage(deps.cursors, 'documents', page, filter, `status=${filter.status ?? ''}`, (q) => deps.stores.documents.list(p.tenant, q), present),
      ),
    );
