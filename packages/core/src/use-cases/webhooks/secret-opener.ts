import * as E from 'fp-ts/lib/Either.js';
import type { SecretBox } from '../../ports/secret-box.js';

/** At most this many opened secrets are kept by one opener; past it, the kept ones are dropped and opened again. */
export const MAX_OPENED_SECRETS = 1_000;

/**
 * Opens sealed endpoint secrets, each sealed value once: an endpoint signs every delivery with the same
 * secret, and opening it (AES-GCM) was a few per cent of a delivery's CPU. Keyed by the sealed value, so a
 * rotated secret is a new entry and nothing is ever stale. The opened values stay in this process's memory,
 * which already holds the master key that opens them all.
 */
export const secretOpener = (box: SecretBox): ((sealed: string) => string | null) => {
  const opened = new Map<string, string>();
  return (sealed: string): string | null => {
    const kept = opened.get(sealed);
    if (kept !== undefined) return kept;
    const r = box.open(sealed);
    if (E.isLeft(r)) return null;
    if (opened.size >= MAX_OPENED_SECRETS) opened.clear();
    opened.set(sealed, r.right);
    return r.right;
  };
};
