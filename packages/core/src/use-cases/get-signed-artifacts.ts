import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '../task-either.js';
import type { CertificateData } from '../certificate.js';
import { buildCertificateData } from '../certificate.js';
import type { DomainError } from '../errors.js';
import { invalidState, notFound } from '../errors.js';
import type { Principal } from '../model/principal.js';
import type { SignatureRequest } from '../model/signature-request.js';
import type { Stores } from '../ports/stores.js';
import type { ContentKey } from '../ports/document-content-store.js';
import { certificateKey, finishedKey } from './jobs/artifacts.js';
import { loadRequest, requireScope } from './policy.js';
import { awaitingSeal } from '../state-machine.js';

const sealed = (r: SignatureRequest): TE.TaskEither<DomainError, SignatureRequest> =>
  awaitingSeal(r)
    ? TE.left(
        invalidState(
          r.status === 'COMPLETED'
            ? 'The finished document is being produced; retry in a few seconds.'
            : 'Every signer has signed and the finished document is being produced; the request becomes COMPLETED when it exists.',
        ),
      )
    : r.status !== 'COMPLETED'
      ? TE.left(invalidState(`The request is ${r.status}; the finished document exists once it is COMPLETED.`))
      : TE.right(r);

/** A sealed PDF with the request it belongs to. */
export interface SignedArtifact {
  readonly request: SignatureRequest;
  readonly bytes: Uint8Array;
}

const artifact = (stores: Stores, p: Principal, requestId: string, key: (requestId: string) => ContentKey): TE.TaskEither<DomainError, SignedArtifact> =>
  pipe(
    requireScope(p, 'signature_requests:read'),
    TE.chainW(() => loadRequest(stores, p, requestId, false)),
    TE.chainW(sealed),
    TE.chainW((r) =>
      pipe(
        stores.documentContents.get(p.tenant, key(r.id)),
        TE.chainW((bytes) => (bytes === null ? TE.left(notFound(`${key(r.id).kind} document`, r.id)) : TE.right({ request: r, bytes }))),
      ),
    ),
  );

/**
 * The finished PDF of a completed, sealed request.
 *
 * @example
 * const finished = await getFinishedDocument(deps)(me, requestId)();
 * if (E.isRight(finished)) writeFile('signed.pdf', finished.right.bytes);
 */
export const getFinishedDocument = (deps: { readonly stores: Stores }) => (p: Principal, requestId: string): TE.TaskEither<DomainError, SignedArtifact> =>
  artifact(deps.stores, p, requestId, finishedKey);

/** The evidence certificate PDF of a completed, sealed request. */
export const getCertificatePdf = (deps: { readonly stores: Stores }) => (p: Principal, requestId: string): TE.TaskEither<DomainError, SignedArtifact> =>
  artifact(deps.stores, p, requestId, certificateKey);

/** The evidence certificate's data (the JSON form), rebuilt from the same sources as the PDF. */
export const getCertificateData =
  (deps: { readonly stores: Stores }) =>
  (p: Principal, requestId: string): TE.TaskEither<DomainError, CertificateData> =>
    pipe(
      requireScope(p, 'signature_requests:read'),
      TE.chainW(() => loadRequest(deps.stores, p, requestId, false)),
      TE.chainW(sealed),
      TE.chainW((r) =>
        pipe(
          deps.stores.documents.findByIds(p.tenant, r.documentIds),
          TE.chainW((docs) => pipe(deps.stores.evidence.listForRequest(p.tenant, r.id), TE.map((ev) => buildCertificateData(r, docs, ev.filter((e) => e.action !== 'sealed'), r.finishedSha256!)))),
        ),
      ),
    );
