import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '../../task-either.js';
import { buildCertificateData } from '../../certificate.js';
import type { DomainError } from '../../errors.js';
import { concurrentModification } from '../../errors.js';
import type { AdoptedSignature, SignatureRequest } from '../../model/signature-request.js';
import type { Document } from '../../model/document.js';
import type { StagedContent } from '../../ports/document-content-store.js';
import type { Clock } from '../../ports/clock.js';
import type { Crypto } from '../../ports/crypto.js';
import type { DocumentRenderer } from '../../ports/document-renderer.js';
import type { IdGenerator } from '../../ports/id-generator.js';
import type { Stores } from '../../ports/stores.js';
import { awaitingSeal } from '../../state-machine.js';
import { applyCommand } from '../policy.js';
import { appendEvent, appendEvidence, enqueueJob } from '../signing/records.js';
import { certificateKey, finishedKey, uploadKey } from './artifacts.js';
import type { JobFailure, JobHandler } from './job-handler.js';
import { jobFailure, nothingToRecord, withRelease } from './job-handler.js';
import { loadJobRequest, tenantOf } from './load-job-request.js';

export interface SealDeps {
  readonly stores: Stores;
  readonly clock: Clock;
  readonly ids: IdGenerator;
  readonly crypto: Crypto;
  readonly renderer: DocumentRenderer;
}

/** The spec's `request.completed` event id: one per request, which the outbox's unique ids enforce. */
export const completedEventId = (requestId: string) => `request.completed:${requestId}`;

/**
 * `seal`: renders the finished PDF and the evidence certificate off the request path, then in one
 * transaction stores both, makes the request and its documents COMPLETED, and releases
 * `request.completed` (with the finished document's digest) and the completed notices. If the worker dies
 * before that commit the job runs again; if two runs race, the unique event id lets only one commit.
 */
export const handleSeal =
  (deps: SealDeps): JobHandler<'seal.complete' | 'seal'> =>
  (job) =>
    pipe(
      loadJobRequest(deps.stores, job),
      TE.chainW((request) =>
        request === null || !awaitingSeal(request) ? TE.right(nothingToRecord) : seal(deps, completing(deps, request)),
      ),
    );

/**
 * The request as its certificate shows it: completed at the last signature, under a new certificate id
 * (a request stored COMPLETED before the seal keeps its own). Nothing is kept until the seal commits, so a
 * run that dies before then leaves no id behind.
 */
const completing = (deps: SealDeps, r: SignatureRequest): Completing => {
  const lastSignature = r.recipients.reduce<string | null>((at, x) => (x.signedAt !== null && (at === null || x.signedAt > at) ? x.signedAt : at), null);
  return {
    ...r,
    // Every signer has a signedAt once all have signed; the clock only stands in for a row that lost them.
    completedAt: r.completedAt ?? lastSignature ?? deps.clock.now().toISOString(),
    certificateId: r.certificateId ?? deps.ids.next('coc'),
  };
};

type Completing = SignatureRequest & { readonly completedAt: string; readonly certificateId: string };

const seal = (deps: SealDeps, request: Completing) => {
  const tenant = { orgId: request.orgId, mode: request.mode };
  const testMode = request.mode === 'test';
  return pipe(
    deps.stores.documents.findByIds(tenant, request.documentIds),
    TE.chainW((docs) =>
      pipe(
        request.documentIds,
        TE.traverseSeqArray((id) =>
          pipe(
            deps.stores.documentContents.get(tenant, uploadKey(id)),
            TE.chainW((bytes): TE.TaskEither<DomainError | JobFailure, { id: string; bytes: Uint8Array }> =>
              bytes === null ? TE.left(jobFailure(`content of ${id} is missing`, true)) : TE.right({ id, bytes }),
            ),
          ),
        ),
        TE.map((contents) => ({ docs, contents })),
      ),
    ),
    TE.chainW(({ docs, contents }) => {
      const signatures: Record<string, AdoptedSignature> = {};
      for (const r of request.recipients) if (r.signature) signatures[r.id] = r.signature;
      return pipe(
        deps.renderer.renderFinished({ documents: contents, fields: request.fields, signatures, testMode }),
        TE.mapLeft((e) => jobFailure(e.detail)),
        TE.chainW((finished) => {
          const finishedSha256 = deps.crypto.sha256Hex(finished);
          return pipe(
            deps.stores.evidence.listForRequest(tenant, request.id),
            TE.chainW((evidence) =>
              pipe(
                deps.renderer.renderCertificate(buildCertificateData(request, docs, evidence, finishedSha256), testMode),
                TE.mapLeft((e) => jobFailure(e.detail)),
                TE.map((certificate) => ({ docs, finished, finishedSha256, certificate, evidenceCount: evidence.length })),
              ),
            ),
          );
        }),
      );
    }),
    // Both artifacts are written ahead of the transaction, which only names them: on SQLite, writing a large
    // PDF in the transaction held the event loop (the jobs run in the API's process by default).
    TE.chainW(({ finished, certificate, ...rest }) =>
      pipe(
        TE.Do,
        TE.bind('finishedContent', () => deps.stores.documentContents.stage(tenant, finished)),
        TE.bind('certificateContent', ({ finishedContent }) =>
          pipe(
            deps.stores.documentContents.stage(tenant, certificate),
            TE.orElseFirstW(() => TE.fromTask(() => deps.stores.documentContents.discard(tenant, finishedContent)())),
          ),
        ),
        TE.map((staged) => ({ ...rest, ...staged })),
      ),
    ),
    TE.map(({ docs, finishedSha256, finishedContent, certificateContent, evidenceCount }) =>
      withRelease(
        (tx: Stores) => sealing(deps, tx, request, { docs, finishedSha256, finishedContent, certificateContent, evidenceCount }),
        // Once the record has run: discard leaves content a key names alone, and frees it when the record
        // failed, lost its lease, or sealed nothing (the request was sealed already).
        () => Promise.all([deps.stores.documentContents.discard(tenant, finishedContent)(), deps.stores.documentContents.discard(tenant, certificateContent)()]),
      ),
    ),
  );
};

/** In the seal's transaction: the request sealed, its artifacts stored under their keys, its completion released. */
const sealing = (
  deps: SealDeps,
  tx: Stores,
  request: Completing,
  o: { readonly docs: readonly Document[]; readonly finishedSha256: string; readonly finishedContent: StagedContent; readonly certificateContent: StagedContent; readonly evidenceCount: number },
) => {
  const tenant = { orgId: request.orgId, mode: request.mode };
  const { docs, finishedSha256, evidenceCount } = o;
  const now = deps.clock.now();
  const at = now.toISOString();
  return pipe(
    tx.signatureRequests.findByIdForUpdate(tenant, request.id),
    TE.chainW((current) =>
      current === null || current.finishedSha256 !== null ? TE.right(undefined) : pipe(
        // The certificate shows the evidence as it was when rendered; under the request's lock, the JSON
        // certificate (built from the stored evidence) must show the same: if anything was added since,
        // the job fails as a concurrent change and renders again at its next run.
        tx.evidence.listForRequest(tenant, request.id),
        TE.chainW((stored) => (stored.length === evidenceCount ? TE.right(undefined) : TE.left(concurrentModification('evidence', request.id)))),
        TE.chainW(() => applyCommand(tx, current, { type: 'Seal', finishedSha256, certificateId: request.certificateId, completedAt: request.completedAt }, now)),
        TE.chainFirstW(() => tx.documentContents.put(tenant, finishedKey(request.id), o.finishedContent)),
        TE.chainFirstW(() => tx.documentContents.put(tenant, certificateKey(request.id), o.certificateContent)),
        TE.chainFirstW(() => tx.documents.setStatusForRequest(tenant, request, 'COMPLETED')),
        TE.chainFirstW((done) => appendEvidence(tx, deps.ids, done, 'sealed', at, null, null, { finished_sha256: finishedSha256 })),
        TE.chainFirstW((done) =>
          appendEvent(
            tx,
            deps.ids,
            done,
            'request.completed',
            at,
            {
              status: 'COMPLETED',
              completed_at: done.completedAt,
              requested_signature_level: done.requestedSignatureLevel,
              documents: done.documentIds.map((id) => {
                const d = docs.find((x) => x.id === id)!;
                return { document_id: d.id, sha256: d.sha256, page_count: d.pageCount };
              }),
              document_sha256: finishedSha256,
              certificate: { certificate_id: done.certificateId },
            },
            completedEventId(request.id),
          ),
        ),
        TE.chainW((done) =>
          pipe(
            done.recipients,
            TE.traverseSeqArray((r) => enqueueJob(tx, deps.ids, done, { kind: 'mail.completed', payload: { requestId: done.id, recipientId: r.id }, runAt: at, createdAt: at, dedupeKey: `completed:${r.id}` })),
          ),
        ),
        TE.map(() => undefined),
      ),
    ),
  );
};

export { tenantOf };
