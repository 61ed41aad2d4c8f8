import type { TaskEither } from 'fp-ts/lib/TaskEither.js';
import type { FieldProblem } from '../errors.js';
import type { AdoptedSignature, Field } from '../model/signature-request.js';
import type { RenderFailure } from './document-renderer.js';

/** What one signer's signature will put on the finished document. */
export interface StampCheckInput {
  /** The signature being adopted. */
  readonly signature: AdoptedSignature;
  /** The signer's fields with the values they will carry once signed, as the seal will stamp them. */
  readonly fields: readonly Field[];
}

/**
 * Checks, before a signature is recorded, that everything it will stamp can be stamped: the drawn image
 * decodes completely within the size limits, and every text can be laid out and embedded in its font. It
 * must go through the very code the seal uses (the same image decoder and embedder, the same fonts and
 * text layout), so that nothing it accepts can later make the request unsealable.
 *
 * Answers the problems found, each with the path of the input at fault (`signature.value` for the
 * signature and whatever is derived from it, `values.<fieldId>` for a field's own value); an empty list
 * means every stamp renders. Left only when the check itself could not run (the renderer is unavailable).
 * Pure CPU work; an implementation keeps it off the caller's event loop.
 */
export interface StampPreflight {
  check(input: StampCheckInput): TaskEither<RenderFailure, readonly FieldProblem[]>;
}
