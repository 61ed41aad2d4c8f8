/**
 * Library-first: your own backend drives @esig/core directly, with the SQLite store, the PDF adapter and no
 * HTTP layer at all. The same use cases, rules and transactions the reference server uses; your backend
 * supplies its own principal (here: one org, test mode), shows the signing step in its own product (links
 * issued without mail), and runs the background jobs when it likes (`runDueJobs`, here right after each step).
 *
 * Run it: `npm run build` then `node examples/embedded-core/dist/index.js [db-path] [out-dir]` — it sends an
 * agreement to two signers, signs it as each of them, seals it, and writes the finished PDF and the evidence
 * certificate to out-dir.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as E from 'fp-ts/lib/Either.js';
import type * as TE from 'fp-ts/lib/TaskEither.js';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import type { DomainError, Principal } from '@esig/core';
import {
  DEFAULT_PAGE_LIMITS,
  addField,
  addRecipient,
  createSignatureRequest,
  describeError,
  execute,
  getCertificatePdf,
  getFinishedDocument,
  inspectUpload,
  issueSigningLink,
  jobHandlers,
  openSigningLink,
  runDueJobs,
  sendSignatureRequest,
  signAsRecipient,
  testMailboxTransport,
  uploadDocument,
  viewAgreement,
} from '@esig/core';
import { createPdfWorkerPool } from '@esig/pdf-pdflib';
import { createUlidGenerator, nodeCrypto, systemClock } from '@esig/runtime-node';
import { openSqliteStore } from '@esig/store-sqlite';

/** Runs a use case; a domain error becomes an exception with its one-sentence description. */
const must = async <A>(task: TE.TaskEither<DomainError, A>): Promise<A> => {
  const r = await task();
  if (E.isLeft(r)) throw new Error(`${r.left._tag}: ${describeError(r.left)}`);
  return r.right;
};

/** A one-page agreement, made on the spot. */
const agreementPdf = async (): Promise<Uint8Array> => {
  const pdf = await PDFDocument.create();
  const page = pdf.addPage([612, 792]);
  page.drawText('Consulting agreement', { x: 72, y: 720, size: 18, font: await pdf.embedFont(StandardFonts.Helvetica) });
  return pdf.save();
};

export interface AgreementResult {
  readonly requestId: string;
  readonly status: string;
  readonly finished: Uint8Array;
  readonly certificate: Uint8Array;
}

export const runAgreement = async (dbPath: string): Promise<AgreementResult> => {
  const db = openSqliteStore({ path: dbPath });
  // PDF work runs on worker threads, off the event loop your backend answers on; close the pool when done.
  const pdf = createPdfWorkerPool({ threads: 1 });
  const base = { ...db, clock: systemClock, ids: createUlidGenerator(systemClock), crypto: nodeCrypto };
  const deps = { ...base, pdf: pdf.inspector, stamps: pdf.stamps, pageLimits: DEFAULT_PAGE_LIMITS, reminderIntervalMs: null };
  // Your backend already knows who is calling; it states the tenant and the permissions it grants.
  const me: Principal = { tenant: { orgId: 'org_acme', mode: 'test' }, scopes: ['*'], credential: { kind: 'external', id: 'backend' } };
  // Test mode keeps its mail in the test mailbox; a live backend passes an SMTP transport (@esig/mailer-smtp).
  const handlers = jobHandlers({ ...base, mail: (tenant) => testMailboxTransport(base, tenant), publicUrl: 'https://sign.acme.example', renderer: pdf.renderer });
  const runJobs = () => must(runDueJobs({ ...base, handlers })());
  const run = execute(deps);

  try {
    const inspected = await must(inspectUpload(deps)(me, await agreementPdf()));
    const doc = await must(run(uploadDocument(deps)(me, { name: 'agreement.pdf', pdf: inspected })));
    const request = await must(run(createSignatureRequest(deps)(me, { title: 'Consulting agreement', documentIds: [doc.id] })));
    const signers = [];
    for (const [i, who] of [{ email: 'cleo@client.example', firstName: 'Cleo', lastName: 'Client' }, { email: 'ada@acme.example', firstName: 'Ada', lastName: 'Lovelace' }].entries()) {
      const recipient = await must(run(addRecipient(deps)(me, request.id, who)));
      await must(run(addField(deps)(me, request.id, { documentId: doc.id, recipientId: recipient.id, type: 'signature', page: 1, x: 72, y: 600 - i * 80, width: 200, height: 50 })));
      signers.push(recipient);
    }
    await must(run(sendSignatureRequest(deps)(me, request.id)));
    // The invitations (into the test mailbox here).
    await runJobs();

    // Each signer signs in your product: you issue their link, your page calls the signer use cases with it.
    for (const signer of signers) {
      const link = await must(run(issueSigningLink(deps)(me, request.id, signer.id)));
      // What the signer's browser reports, for the evidence trail (your page passes its own request's values).
      const client = { ip: '203.0.113.10', userAgent: 'embedded-core example' };
      const view = await must(openSigningLink(deps)(link.token, client));
      // ... your page shows view.documents and view.fields; the signer reads the agreement:
      await must(viewAgreement(deps)(link.token, client));
      await must(signAsRecipient(deps)(link.token, { values: {}, signature: { kind: 'typed', value: `${view.recipient.firstName} ${view.recipient.lastName}` } }, client));
    }
    // The seal (finished PDF and certificate) and the completed notices.
    await runJobs();

    const finished = await must(getFinishedDocument(deps)(me, request.id));
    const certificate = await must(getCertificatePdf(deps)(me, request.id));
    return { requestId: request.id, status: finished.request.status, finished: finished.bytes, certificate: certificate.bytes };
  } finally {
    await pdf.close();
    db.close();
  }
};

// Run directly: `node examples/embedded-core/dist/index.js [db-path] [out-dir]`.
if (import.meta.url === `file://${process.argv[1]}`) {
  const out = process.argv[3] ?? './data/embedded-example';
  const result = await runAgreement(process.argv[2] ?? './data/embedded-example.db');
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, 'finished.pdf'), result.finished);
  writeFileSync(join(out, 'certificate.pdf'), result.certificate);
  console.log(`${result.requestId}: ${result.status}; wrote ${join(out, 'finished.pdf')} and ${join(out, 'certificate.pdf')}`);
}
