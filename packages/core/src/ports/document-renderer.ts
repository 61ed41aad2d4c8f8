import type { TaskEither } from 'fp-ts/lib/TaskEither.js';
import type { CertificateData } from '../certificate.js';
import type { AdoptedSignature, Field } from '../model/signature-request.js';

export interface RenderFailure {
  readonly _tag: 'RenderFailure';
  readonly detail: string;
}

export interface FinishedDocumentInput {
  /** The request's documents in order, as uploaded. */
  readonly documents: ReadonlyArray<{ readonly id: string; readonly bytes: Uint8Array }>;
  /** Every field with its value (values of unsigned optional fields may be null). */
  readonly fields: readonly Field[];
  /** Each signer's adopted signature, by recipient id. */
  readonly signatures: Readonly<Record<string, AdoptedSignature>>;
  /** Test mode: every page carries a visible "TEST — not legally binding" mark. */
  readonly testMode: boolean;
}

/** Produces the two sealed artifacts of a completed request. Pure CPU work; no storage. */
export interface DocumentRenderer {
  /** One PDF with every page of every document in order, values and signatures stamped at their fields. */
  renderFinished(input: FinishedDocumentInput): TaskEither<RenderFailure, Uint8Array>;
  /** The evidence certificate as a PDF. */
  renderCertificate(data: CertificateData, testMode: boolean): TaskEither<RenderFailure, Uint8Array>;
}
