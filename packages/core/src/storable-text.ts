import type { FieldProblem } from './errors.js';

// NUL and unpaired UTF-16 surrogates: text no store keeps as given and no font draws. PostgreSQL refuses NUL in
// text and JSON (a store failure, not an answer a caller can act on); a lone surrogate has no UTF-8 form, so what
// a store keeps reads back as U+FFFD (better-sqlite3 writes it as invalid UTF-8), not what was accepted.
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

const MESSAGE = 'must not contain NUL or unpaired surrogate characters';

/**
 * The first string in `input` (a value, or an object's key, at any depth) that holds NUL or a lone surrogate, as
 * a problem at its path (`recipients.0.name`; `path` is the prefix, '(body)' when the input itself is the string);
 * null when every string can be stored. Use cases check their inputs with it, so an embedder calling the core
 * directly is refused as an HTTP client is, whatever store it runs on.
 */
export const unstorableText = (input: unknown, path = '', depth = 0): FieldProblem | null => {
  if (typeof input === 'string') return UNSTORABLE.test(input) ? { path: path || '(body)', message: MESSAGE } : null;
  // Inputs are bounded in size; the depth bound only keeps a pathological nesting from costing a deep walk.
  if (typeof input !== 'object' || input === null || depth > 32) return null;
  for (const [k, v] of Object.entries(input)) {
    const at = path ? `${path}.${k}` : k;
    if (UNSTORABLE.test(k)) return { path: at, message: MESSAGE };
    const found = unstorableText(v, at, depth + 1);
    if (found) return found;
  }
  return null;
};
