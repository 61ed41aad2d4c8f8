/**
 * Library-first: a team's own backend drives @esig/core directly, with the SQLite store, and no HTTP
 * adapter at all. The same use cases, rules and transactions the reference server uses; the team supplies
 * its own principal (here: one org, test mode) and its own ids of record.
 */
import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import * as TE from 'fp-ts/lib/TaskEither.js';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import type { Principal, SignatureRequest } from '@esig/core';
import { DEFAULT_PAGE_LIMITS, addField, addRecipient, createSignatureRequest, execute, inspectUpload, sendSignatureRequest, uploadDocument } from '@esig/core';
import { createPdfWorkerPool } from '@esig/pdf-pdflib';
import { createUlidGenerator, nodeCrypto, systemClock } from '@esig/runtime-node';
import { openSqliteStore } from '@esig/store-sqlite';

export const sendContract = async (dbPath: string): Promise<E.Either<string, SignatureRequest>> => {
  const db = openSqliteStore({ path: dbPath });
  // PDF work runs on worker threads, off the event loop your backend answers on; close the pool when done.
  const pdfPool = createPdfWorkerPool({ threads: 1 });
  const deps = { ...db, clock: systemClock, ids: createUlidGenerator(systemClock), crypto: nodeCrypto, pdf: pdfPool.inspector, pageLimits: DEFAULT_PAGE_LIMITS };
  // Your backend already knows who is calling; it states the tenant and the permissions it grants.
  const me: Principal = { tenant: { orgId: 'org_acme', mode: 'test' }, scopes: ['*'], credential: { kind: 'external', id: 'backend' } };

  const pdf = await PDFDocument.create();
  const page = pdf.addPage();
  page.drawText('Consulting agreement', { x: 72, y: 720, size: 18, font: await pdf.embedFont(StandardFonts.Helvetica) });

  const run = pipe(
    inspectUpload(deps)(me, await pdf.save()),
    // One transaction for the whole draft: it commits entirely or not at all.
    TE.chain((inspected) =>
      execute(deps)((tx) =>
        pipe(
          uploadDocument(deps)(me, { name: 'agreement.pdf', pdf: inspected })(tx),
          TE.chain((doc) => pipe(createSignatureRequest(deps)(me, { title: 'Consulting agreement', documentIds: [doc.id] })(tx), TE.map((req) => ({ doc, req })))),
          TE.chain(({ doc, req }) =>
            pipe(
              addRecipient(deps)(me, req.id, { email: 'client@example.com', firstName: 'Cleo', lastName: 'Client' })(tx),
              TE.chain((rcp) => addField(deps)(me, req.id, { documentId: doc.id, recipientId: rcp.id, type: 'signature', page: 1, x: 72, y: 600, width: 200, height: 50 })(tx)),
              TE.map(() => req),
            ),
          ),
        ),
      ),
    ),
    TE.chain((req) => execute(deps)(sendSignatureRequest(deps)(me, req.id))),
    TE.mapLeft((e) => `${e._tag}${'detail' in e ? `: ${e.detail}` : ''}`),
  );
  try {
    return await run();
  } finally {
    await pdfPool.close();
    db.close();
  }
};

// Run directly: `npx tsx examples/embedded-core/src/index.ts [db-path]`
if (import.meta.url === `file://${process.argv[1]}`) {
  const result = await sendContract(process.argv[2] ?? './data/embedded-example.db');
  if (E.isLeft(result)) {
    console.error(`failed: ${result.left}`);
    process.exit(1);
  }
  console.log(`sent ${result.right.id}: ${result.right.status}, ${result.right.recipients.length} recipient(s), ${result.right.fields.length} field(s)`);
}
