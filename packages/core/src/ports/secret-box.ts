import type { Either } from 'fp-ts/lib/Either.js';

/**
 * Authenticated encryption of secrets at rest (webhook signing secrets), under a key the core never sees.
 * `open` fails when the text was altered or sealed under another key.
 */
export interface SecretBox {
  seal(plaintext: string): string;
  open(sealed: string): Either<{ readonly _tag: 'SecretUnreadable' }, string>;
}
