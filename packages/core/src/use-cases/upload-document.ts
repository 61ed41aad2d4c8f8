import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '../task-either.js';
import type { DomainError } from '../errors.js';
import { invalidDocument } from '../errors.js';
import type { Document, PageLimits, PageSize } from '../model/document.js';
import type { Principal } from '../model/principal.js';
import type { Clock } from '../ports/clock.js';
import type { StagedContent } from '../ports/document-content-store.js';
import type { StoreError } from '../errors.js';
import type { Stores } from '../ports/stores.js';
import type { Crypto } from '../ports/crypto.js';
import type { IdGenerator } from '../ports/id-generator.js';
import type { PdfInspector } from '../ports/pdf-inspector.js';
import type { Command } from './command.js';
import { check, requireScope } from './policy.js';
import { unstorableText } from '../storable-text.js';
import { recordEvent } from './signing/records.js';
import { uploadKey } from './jobs/artifacts.js';

const SHA256_HEX = /^[0-9a-f]{64}$/;

/** An upload that passed inspection. Only `inspectUpload` makes one, so no unchecked bytes get stored. */
export interface InspectedPdf {
  readonly _brand: 'InspectedPdf';
  readonly bytes: Uint8Array;
  readonly pageCount: number;
  readonly pageSizes: readonly PageSize[];
  readonly sizeBytes: number;
  readonly sha256: string;
  /** Its bytes written ahead of the transaction (`stageUpload`), which then stores only their key; absent until. */
  readonly staged?: StagedContent;
}

/**
 * Checks an upload before any transaction opens (parsing a large PDF must not hold the write lock):
 * a readable, unencrypted PDF with 1 to `pageLimits.maxPagesPerDocument` pages, each measured.
 *
 * @example
 * const inspected = await inspectUpload(deps)(me, bytes)(); // Left: InvalidDocument, with the reason
 */
export const inspectUpload =
  (deps: { readonly pdf: PdfInspector; readonly crypto: Crypto; readonly pageLimits: PageLimits }) =>
  (p: Principal, bytes: Uint8Array): TE.TaskEither<DomainError, InspectedPdf> => {
    const maxPages = deps.pageLimits.maxPagesPerDocument;
    return pipe(
      requireScope(p, 'documents:write'),
      TE.chainW(() => deps.pdf.inspect(bytes, { maxPages })),
      // The inspector stops at the limit; checking again here keeps the rule in the core whatever adapter runs.
      TE.chainW((facts) =>
        facts.pageCount > maxPages
          ? TE.left(invalidDocument(`The PDF has more than ${maxPages} pages, the limit per document.`))
          : facts.pageSizes.length !== facts.pageCount
            ? TE.left(invalidDocument('The pages of the PDF could not be measured.'))
            : TE.right(facts),
      ),
      TE.map((facts) => ({
        _brand: 'InspectedPdf' as const,
        bytes,
        pageCount: facts.pageCount,
        pageSizes: facts.pageSizes,
        sizeBytes: bytes.byteLength,
        sha256: facts.sha256 !== undefined && SHA256_HEX.test(facts.sha256) ? facts.sha256 : deps.crypto.sha256Hex(bytes),
      })),
    );
  };

/**
 * Writes an inspected PDF's bytes ahead of the transaction that stores the document (`DocumentContentStore.stage`):
 * a store may then write them in pieces, none of which holds the process or the writer for long, and the
 * transaction only names them. The same PDF, staged; `uploadDocument` puts the staged content. Once the command
 * has run, call `releaseUpload` whatever its outcome: it discards the content if no document holds it.
 *
 * @example
 * const staged = await pipe(inspectUpload(deps)(me, bytes), TE.chainW((pdf) => stageUpload(deps)(me, pdf)))();
 */
export const stageUpload =
  (deps: { readonly stores: Stores }) =>
  (p: Principal, pdf: InspectedPdf): TE.TaskEither<StoreError, InspectedPdf> =>
    pdf.staged !== undefined
      ? TE.right(pdf)
      : pipe(
          deps.stores.documentContents.stage(p.tenant, pdf.bytes),
          TE.map((staged) => ({ ...pdf, staged })),
        );

/**
 * Best effort, after the upload's command, whatever its outcome: discards the staged content unless the
 * command stored it (the store leaves content a key names alone). A failure is left to the purge.
 */
export const releaseUpload =
  (deps: { readonly stores: Stores }) =>
  (p: Principal, pdf: InspectedPdf): TE.TaskEither<never, void> =>
    pdf.staged === undefined
      ? TE.right(undefined)
      : pipe(
          deps.stores.documentContents.discard(p.tenant, pdf.staged),
          TE.orElseW(() => TE.right(undefined)),
        );

/**
 * Stores an inspected PDF and its metadata, and records `document.created`, in one transaction.
 *
 * @example
 * const doc = await pipe(
 *   inspectUpload(deps)(me, bytes),
 *   TE.chainW((pdf) => execute(deps)(uploadDocument(deps)(me, { name: 'nda.pdf', pdf }))),
 * )();
 */
export const uploadDocument =
  (deps: { readonly clock: Clock; readonly ids: IdGenerator }) =>
  (p: Principal, input: { readonly name: string; readonly pdf: InspectedPdf }): Command<Document> =>
  (tx) => {
    const name = input.name.trim();
    const now = deps.clock.now().toISOString();
    const doc: Document = {
      id: deps.ids.next('doc'),
      orgId: p.tenant.orgId,
      mode: p.tenant.mode,
      name,
      status: 'UPLOADED',
      pageCount: input.pdf.pageCount,
      pageSizes: input.pdf.pageSizes,
      sizeBytes: input.pdf.sizeBytes,
      sha256: input.pdf.sha256,
      signatureRequestId: null,
      createdAt: now,
    };
    return pipe(
      requireScope(p, 'documents:write'),
      TE.chainW(() =>
        check([
          unstorableText(input.name, 'name'),
          name.length === 0 || name.length > 255 ? { path: 'name', message: 'must have 1 to 255 characters' } : null,
        ]),
      ),
      TE.chainW(() => tx.documents.insert(doc)),
      TE.chainW(() => tx.documentContents.put(p.tenant, uploadKey(doc.id), input.pdf.staged ?? input.pdf.bytes)),
      TE.chainW(() =>
        recordEvent(tx, deps.ids, {
          id: deps.ids.next('evt'),
          orgId: doc.orgId,
          mode: doc.mode,
          type: 'document.created',
          createdAt: now,
          redeliveryOf: null,
          data: { document_id: doc.id, status: doc.status, sha256: doc.sha256, page_count: doc.pageCount, created_at: now },
        }),
      ),
      TE.map(() => doc),
    );
  };
