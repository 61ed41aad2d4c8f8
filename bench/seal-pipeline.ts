/**
 * The whole finishing step as the worker runs it, on a real SQLite file: the `seal` job's handler loads the
 * request, its documents and its evidence, renders both PDFs, and commits them with the event and the job's
 * completion. Each round needs a fresh completed request; building it is not timed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import * as TE from 'fp-ts/lib/TaskEither.js';
import type { AdoptedSignature, Principal } from '@esig/core';
import { DEFAULT_PAGE_LIMITS, addField, addRecipient, createSignatureRequest, execute, handleSeal, inspectUpload, sendSignatureRequest, signAsRecipient, uploadDocument } from '@esig/core';
import { pdfLibInspector, pdfLibRenderer, pdfLibStampPreflight } from '@esig/pdf-pdflib';
import { createUlidGenerator, nodeCrypto, systemClock } from '@esig/runtime-node';
import { openSqliteStore } from '@esig/store-sqlite';

const must = async <A>(te: TE.TaskEither<{ _tag: string }, A>, what: string): Promise<A> => {
  const r = await te();
  if (E.isLeft(r)) throw new Error(`${what}: ${JSON.stringify(r.left).slice(0, 300)}`);
  return r.right;
};

export const openPipeline = async (documents: readonly Uint8Array[], signatures: readonly AdoptedSignature[]) => {
  const dir = mkdtempSync(join(tmpdir(), 'esig-bench-seal-'));
  const db = openSqliteStore({ path: join(dir, 'esig.db') });
  const ids = createUlidGenerator(systemClock);
  // On the bench's own thread: the seal's rendering is what is measured, not the thread hop.
  const deps = { ...db, clock: systemClock, ids, crypto: nodeCrypto, pdf: pdfLibInspector, renderer: pdfLibRenderer, stamps: pdfLibStampPreflight, pageLimits: DEFAULT_PAGE_LIMITS };
  const me: Principal = { tenant: { orgId: 'org_bench', mode: 'test' }, scopes: ['*'], credential: { kind: 'api_key', keyId: 'bench' } };
  const pdfs = await Promise.all(documents.map((bytes) => must(inspectUpload(deps)(me, bytes), 'inspect')));
  const seal = handleSeal(deps);

  /** A request with every signature in, its seal job queued: what the worker finds after the last signature. */
  const prepare = async () => {
    const docs = [];
    for (const [i, pdf] of pdfs.entries()) docs.push(await must(execute(deps)(uploadDocument(deps)(me, { name: `part-${i + 1}.pdf`, pdf })), 'upload'));
    const req = await must(execute(deps)(createSignatureRequest(deps)(me, { title: 'Bench agreement', documentIds: docs.map((d) => d.id) })), 'create');
    const tokens: string[] = [];
    for (const [i, signature] of signatures.entries()) {
      const r = await must(execute(deps)(addRecipient(deps)(me, req.id, { email: `s${i}@example.com`, firstName: `Signer`, lastName: `N${i + 1}` })), 'recipient');
      const doc = docs[i % docs.length]!;
      for (const f of [
        { type: 'signature' as const, y: 620 },
        { type: 'date_signed' as const, y: 690 },
        { type: 'text' as const, y: 100 },
      ])
        await must(execute(deps)(addField(deps)(me, req.id, { documentId: doc.id, recipientId: r.id, type: f.type, page: doc.pageCount, x: 72, y: f.y, width: 200, height: f.type === 'signature' ? 60 : 20 })), 'field');
      const token = nodeCrypto.randomAlphanumeric(43);
      await must(db.uow.transaction((tx) => tx.signingLinks.insert({ tokenHash: nodeCrypto.sha256Hex(token), orgId: 'org_bench', mode: 'test', requestId: req.id, recipientId: r.id, createdAt: new Date().toISOString(), expiresAt: null })), 'link');
      tokens.push(token);
      void signature;
    }
    await must(execute(deps)(sendSignatureRequest(deps)(me, req.id)), 'send');
    const sent = await must(db.stores.signatureRequests.findById(me.tenant, req.id), 'load');
    for (const [i, token] of tokens.entries()) {
      const text = sent!.fields.find((f) => f.recipientId === sent!.recipients[i]!.id && f.type === 'text')!;
      await must(signAsRecipient(deps)(token, { values: { [text.id]: `Reference ${i + 1}` }, signature: signatures[i]! }, { ip: '127.0.0.1', userAgent: 'bench' }), 'sign');
    }
    const now = new Date();
    const jobs = await must(db.stores.jobs.claim(['seal.complete'], 'bench', now.toISOString(), new Date(now.getTime() + 600_000).toISOString(), 1), 'claim');
    const [job] = jobs;
    if (jobs.length !== 1 || job?.kind !== 'seal.complete') throw new Error('no seal job');
    return job;
  };

  /** The timed part: exactly what the worker does for the job. */
  const finish = async (job: Awaited<ReturnType<typeof prepare>>) =>
    must(
      pipe(
        seal(job),
        TE.chainW((command) => db.uow.transaction((tx) => pipe(command(tx), TE.chainW(() => tx.jobs.complete(job.id, 'bench'))))),
      ),
      'seal',
    );

  return { prepare, finish, close: () => { db.close(); rmSync(dir, { recursive: true, force: true }); } };
};
