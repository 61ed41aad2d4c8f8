import * as E from 'fp-ts/lib/Either.js';
import type * as t from 'io-ts';
import type { FieldProblem, ValidationFailed } from '@esig/core';
import { unstorableText, validationFailed } from '@esig/core';

/**
 * Decodes input with a codec and turns io-ts's errors into addressed problems (`documentIds.2: must be a
 * doc_ id`). Kept in one place so the codec library stays cheap to swap. Every string of the input, in any
 * field of any route, is first checked for text that cannot be stored (NUL, lone surrogates).
 */
export const decode = <A>(codec: t.Type<A, unknown, unknown>, input: unknown, root = ''): E.Either<ValidationFailed, A> => {
  const unsafe = unstorableText(input, root);
  if (unsafe) return E.left(validationFailed([unsafe]));
  const result = codec.decode(input);
  if (E.isRight(result)) return E.right(result.right);
  const seen = new Set<string>();
  const problems: FieldProblem[] = [];
  for (const err of result.left) {
    const path = [root, ...pathOf(err.context)].filter((k) => k !== '').join('.');
    // Unions and intersections report one failure per branch; the innermost message is the useful one.
    const message = err.message ?? (err.value === undefined ? 'is required' : `must be ${expected(err.context[err.context.length - 1]?.type)}`);
    const key = `${path}\u0000${message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    problems.push({ path: path || '(body)', message });
  }
  // A nullable field given a wrong value fails both branches: what is wrong with the value is the useful half.
  const answered = new Set(problems.filter((p) => p.message !== 'must be null').map((p) => p.path));
  const kept = problems.filter((p) => p.message !== 'must be null' || !answered.has(p.path));
  // The detail names the first problem (validationFailed's default wording).
  return E.left(validationFailed(kept.slice(0, 20)));
};

/** What a value must be, for a client: an enumeration's values rather than the codec's name. */
const expected = (type: (t.Decoder<unknown, unknown> & { readonly _tag?: string; readonly keys?: Record<string, unknown> }) | undefined): string =>
  type === undefined ? 'valid' : type._tag === 'KeyofType' && type.keys !== undefined ? `one of: ${Object.keys(type.keys).join(', ')}` : type.name;

const isBranching = (type: unknown) => {
  const tag = (type as { _tag?: string })._tag;
  return tag === 'IntersectionType' || tag === 'UnionType';
};

/** Keys of a context, without the branch indexes that unions and intersections insert. */
const pathOf = (context: t.Context): string[] =>
  context.filter((entry, i) => i > 0 && !isBranching(context[i - 1]!.type)).map((entry) => entry.key);

/** Decodes each path parameter with its codec; the first failure names the parameter. */
export const decodeEach = (codecs: Record<string, t.Mixed>, values: Record<string, string>): E.Either<ValidationFailed, Record<string, unknown>> => {
  const out: Record<string, unknown> = {};
  for (const [k, codec] of Object.entries(codecs)) {
    const r = decode(codec, values[k], k);
    if (E.isLeft(r)) return r;
    out[k] = r.right;
  }
  return E.right(out);
};
