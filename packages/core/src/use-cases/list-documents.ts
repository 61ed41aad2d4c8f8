import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '../task-either.js';
import type { DomainError } from '../errors.js';
import type { Document } from '../model/document.js';
import type { Principal } from '../model/principal.js';
import type { CursorSigner, ListEnvelope } from '../pagination.js';
import type { DocumentFilter } from '../ports/document-store.js';
import type { Stores } from '../ports/stores.js';
import type { PageRequest } from './list-page.js';
import { listPage } from './list-page.js';
import { requireScope } from './policy.js';

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
