import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '../task-either.js';
import type { DomainError } from '../errors.js';
import { notFound } from '../errors.js';
import type { Document } from '../model/document.js';
import type { Principal } from '../model/principal.js';
import type { Stores } from '../ports/stores.js';
import { requireScope } from './policy.js';
import { uploadKey } from './jobs/artifacts.js';

/** One document's metadata; another org's or mode's document is not found. */
export const getDocument =
  (deps: { readonly stores: Stores }) =>
  (p: Principal, id: string): TE.TaskEither<DomainError, Document> =>
    pipe(
      requireScope(p, 'documents:read'),
      TE.chainW(() => deps.stores.documents.findById(p.tenant, id)),
      TE.chainW((d) => (d === null ? TE.left(notFound('document', id)) : TE.right(d))),
    );

/** The uploaded PDF's bytes, with its metadata. */
export const getDocumentContent =
  (deps: { readonly stores: Stores }) =>
  (p: Principal, id: string): TE.TaskEither<DomainError, { readonly document: Document; readonly bytes: Uint8Array }> =>
    pipe(
      getDocument(deps)(p, id),
      TE.chainW((document) =>
        pipe(
          deps.stores.documentContents.get(p.tenant, uploadKey(id)),
          TE.chainW((bytes) => (bytes === null ? TE.left(notFound('document', id)) : TE.right({ document, bytes }))),
        ),
      ),
    );
