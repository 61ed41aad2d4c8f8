import fc from 'fast-check';
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import { describe, expect, it } from 'vitest';
import { ISO_MS, Int, ModeC, RowDecodeError, Timestamp, decode, decodeAll, nullable, oneOf, rowName, rowType, withDefault } from '../src/index.js';

const T = '2026-11-23T08:00:00.000Z';
const Row = t.type({ id: t.string, status: oneOf(['draft', 'sent'] as const, 'Status'), n: Int, at: nullable(Timestamp), mode: ModeC });
const good = { id: 'doc_1', status: 'draft', n: 3, at: '2026-11-23T08:00:00.000Z', mode: 'test' };

const problemsOf = (r: E.Either<unknown, unknown>): RowDecodeError => {
  if (E.isRight(r)) throw new Error('expected a decode failure');
  const cause = (r.left as { _tag: string; cause: unknown }).cause;
  expect((r.left as { _tag: string })._tag).toBe('StoreFailure');
  expect(cause).toBeInstanceOf(RowDecodeError);
  return cause as RowDecodeError;
};

describe('decode', () => {
  it('passes a well-formed row through', () => {
    expect(decode(Row, 'documents row doc_1')(good)).toEqual(E.right(good));
  });

  it('names the row and every bad field with what was expected and what was found', () => {
    const err = problemsOf(decode(Row, 'documents row doc_1')({ ...good, status: 'lost', n: 1.5, at: '2026-11-23T08:00:00Z' }));
    expect(err.name).toBe('RowDecodeError');
    expect(err.what).toBe('documents row doc_1');
    expect(err.problems).toEqual([
      'status: expected Status, got "lost"',
      'n: expected Int, got 1.5',
      // A union reports each member it tried, keyed by the member's position.
      'at.0: expected Timestamp, got "2026-11-23T08:00:00Z"',
      'at.1: expected null, got "2026-11-23T08:00:00Z"',
    ]);
    expect(err.message).toBe(`Undecodable documents row doc_1: ${err.problems.join('; ')}`);
  });

  it('reports a non-object as the row itself, bytes by size and long values shortened', () => {
    expect(problemsOf(decode(Row, 'x')(42)).problems).toEqual(['(row): expected { id: string, status: Status, n: Int, at: (Timestamp | null), mode: Mode }, got 42']);
    const bytes = problemsOf(decode(t.type({ body: t.string }), 'x')({ body: new Uint8Array(300) }));
    expect(bytes.problems).toEqual(['body: expected string, got <300 bytes>']);
    const long = problemsOf(decode(t.type({ s: t.number }), 'x')({ s: 'a'.repeat(200) })).problems[0]!;
    expect(long).toBe(`s: expected number, got "${'a'.repeat(76)}...`);
  });

  it('keeps a custom codec message and survives values JSON cannot print', () => {
    const Odd = new t.Type<number, number, unknown>('Odd', t.number.is, (u, c) => t.failure(u, c, 'not odd'), t.identity);
    expect(problemsOf(decode(t.type({ v: Odd }), 'x')({ v: 2 })).problems).toEqual(['v: expected Odd, got 2 (not odd)']);
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(problemsOf(decode(t.type({ v: t.string }), 'x')({ v: cyclic })).problems).toEqual(['v: expected string, got object']);
    expect(problemsOf(decode(t.type({ v: t.string }), 'x')({ v: 10n })).problems).toEqual(['v: expected string, got bigint']);
  });
});

describe('codecs', () => {
  it('Timestamp takes only the toISOString spelling of a real instant', () => {
    expect(Timestamp.is('2026-11-23T08:00:00.000Z')).toBe(true);
    for (const s of ['2026-11-23T08:00:00Z', '2026-11-23T08:00:00.000+00:00', '2026-13-23T08:00:00.000Z', '2026-11-23 08:00:00.000Z'])
      expect(Timestamp.is(s), s).toBe(false);
  });

  it('Timestamp takes exactly the texts toISOString gives, on any digits', () => {
    const canonical = (s: string) => ISO_MS.test(s) && !Number.isNaN(Date.parse(s)) && new Date(s).toISOString() === s;
    const pad = (n: number, w: number) => String(n).padStart(w, '0');
    // Each field over a range past its bounds, so that every limit is crossed; leap years come up often enough.
    const shaped = fc
      .tuple(fc.oneof(fc.integer({ min: 0, max: 9999 }), fc.constantFrom(0, 1600, 1900, 2000, 2024, 2100, 2400, 9996)), fc.integer({ min: 0, max: 19 }), fc.integer({ min: 0, max: 39 }), fc.integer({ min: 0, max: 29 }), fc.integer({ min: 0, max: 69 }), fc.integer({ min: 0, max: 69 }), fc.integer({ min: 0, max: 999 }))
      .map(([y, mo, d, h, mi, s, ms]) => `${pad(y, 4)}-${pad(mo, 2)}-${pad(d, 2)}T${pad(h, 2)}:${pad(mi, 2)}:${pad(s, 2)}.${pad(ms, 3)}Z`);
    const anyDigits = fc.array(fc.integer({ min: 0, max: 9 }), { minLength: 17, maxLength: 17 }).map((d) => `${d.slice(0, 4).join('')}-${d.slice(4, 6).join('')}-${d.slice(6, 8).join('')}T${d.slice(8, 10).join('')}:${d.slice(10, 12).join('')}:${d.slice(12, 14).join('')}.${d.slice(14).join('')}Z`);
    fc.assert(
      fc.property(fc.oneof(shaped, anyDigits, fc.string()), (s) => {
        expect(Timestamp.is(s)).toBe(canonical(s));
      }),
      { numRuns: 20_000 },
    );
    for (const [s, ok] of [
      ['2024-02-29T00:00:00.000Z', true],
      ['2000-02-29T23:59:59.999Z', true],
      ['2023-02-29T00:00:00.000Z', false],
      ['1900-02-29T00:00:00.000Z', false],
      ['2026-02-31T00:00:00.000Z', false],
      ['2026-04-31T00:00:00.000Z', false],
      ['2026-01-01T24:00:00.000Z', false],
      ['0000-02-29T00:00:00.000Z', true],
      ['9999-12-31T23:59:59.999Z', true],
    ] as const)
      expect(Timestamp.is(s), s).toBe(ok);
  });

  it('Int refuses fractions and unsafe magnitudes', () => {
    expect(Int.is(7)).toBe(true);
    expect(Int.is(0.5)).toBe(false);
    expect(Int.is(2 ** 53)).toBe(false);
    expect(Int.is('7')).toBe(false);
  });

  it('ModeC and oneOf accept only the listed strings', () => {
    expect(ModeC.is('live')).toBe(true);
    expect(ModeC.is('prod')).toBe(false);
    expect(oneOf(['a'] as const, 'A').is(1)).toBe(false);
  });
});

describe('nullable', () => {
  // What a caller can see of a decode: the value, or each error's path, expected types, value and message.
  const seen = (v: t.Validation<unknown>) =>
    E.isRight(v)
      ? { value: v.right }
      : { errors: v.left.map((e) => ({ path: e.context.map((c) => c.key), types: e.context.map((c) => c.type.name), value: e.value, message: e.message })) };
  const Pair = t.type({ at: Timestamp, n: Int }, 'Pair');
  const inners: readonly [string, t.Mixed][] = [
    ['Timestamp', Timestamp],
    ['a type holding a nullable', t.type({ at: Timestamp, pair: nullable(Pair) }, 'Outer')],
    ['a union', t.union([t.string, t.boolean])],
  ];
  // Values near what the codecs take, and anything at all.
  const candidate = fc.oneof(
    fc.constant(null),
    fc.constant(undefined),
    fc.constant(T),
    fc.record({ at: fc.oneof(fc.constant(T), fc.anything()), n: fc.oneof(fc.integer(), fc.anything()) }, { requiredKeys: [] }),
    fc.record({ at: fc.constant(T), pair: fc.oneof(fc.constant(null), fc.record({ at: fc.constant(T), n: fc.integer() }), fc.anything()) }),
    fc.anything(),
  );

  for (const [name, inner] of inners)
    it(`decodes as t.union([codec, t.null]) does, value and errors alike, with ${name} inside`, () => {
      // Inside a type, so that the errors' paths start below the root as a row's columns do.
      const fast = t.type({ v: nullable(inner) });
      const reference = t.type({ v: t.union([inner, t.null]) });
      fc.assert(
        fc.property(candidate, (v) => {
          expect(seen(fast.decode({ v }))).toEqual(seen(reference.decode({ v })));
          expect(fast.is({ v })).toBe(reference.is({ v }));
        }),
      );
    });

  it('keeps what the OpenAPI schema and encoders read: name, members, encoding', () => {
    const c = nullable(Timestamp);
    const u = t.union([Timestamp, t.null]);
    expect(c._tag).toBe('UnionType');
    expect(c.name).toBe(u.name);
    expect(c.types).toEqual([Timestamp, t.null]);
    expect(c.encode(T)).toBe(T);
    expect(c.encode(null)).toBe(null);
  });
});

describe('decodeAll', () => {
  const byId = (u: unknown) => decode(t.type({ id: t.string }), rowName('documents', u))(u);

  it('decodes every row in order', () => {
    expect(decodeAll(byId)([{ id: 'a' }, { id: 'b' }])).toEqual(E.right([{ id: 'a' }, { id: 'b' }]));
  });

  it('fails with the first undecodable row', () => {
    const err = problemsOf(decodeAll(byId)([{ id: 'a' }, { id: 5 }, { id: 6 }]));
    expect(err.what).toBe('documents row');
    expect(err.problems).toEqual(['id: expected string, got 5']);
  });
});

describe('rowName', () => {
  it('names the row by its key when that is a string, and by the table alone otherwise', () => {
    expect(rowName('documents', { id: 'doc_1' })).toBe('documents row doc_1');
    expect(rowName('idempotency', { key: 'k1' }, 'key')).toBe('idempotency row k1');
    expect(rowName('documents', { id: 1 })).toBe('documents row');
    expect(rowName('documents', null)).toBe('documents row');
  });
});

describe('rowType', () => {
  // A field that decodes to another value (as a JSON or 0/1 column does), one with a default, and a nested row.
  const NumberFromText = new t.Type<number, string, unknown>(
    'NumberFromText',
    (u): u is number => typeof u === 'number',
    (u, c) => (typeof u === 'string' && /^\d+$/.test(u) ? t.success(Number(u)) : t.failure(u, c, 'digits')),
    String,
  );
  const props = {
    id: t.string,
    status: oneOf(['draft', 'sent'] as const, 'Status'),
    n: Int,
    at: nullable(Timestamp),
    count: NumberFromText,
    note: withDefault(t.string, 'none'),
  };
  const nested = (make: typeof rowType) => make({ ...props, inner: make({ id: t.string, count: NumberFromText }, 'Inner') }, 'Row');
  const mine = nested(rowType);
  const theirs = nested((p, name) => t.type(p, name));
  /** An io-ts result compared by what it says: the value, or each error's path, types, value and message. */
  const said = (r: t.Validation<unknown>) =>
    E.isRight(r) ? { right: r.right } : { left: r.left.map((e) => ({ path: e.context.map((c) => [c.key, c.type.name, c.actual]), value: e.value, message: e.message })) };

  const field = <A>(valid: fc.Arbitrary<A>) => fc.oneof({ arbitrary: valid, weight: 4 }, { arbitrary: fc.anything(), weight: 1 });
  const row = fc.record(
    {
      id: field(fc.string()),
      status: field(fc.constantFrom('draft', 'sent')),
      n: field(fc.integer()),
      at: field(fc.constantFrom(null, T)),
      count: field(fc.nat().map(String)),
      note: field(fc.string()),
      inner: field(fc.record({ id: field(fc.string()), count: field(fc.nat().map(String)) }, { requiredKeys: [] })),
    },
    { requiredKeys: ['id', 'status', 'n', 'at', 'count', 'inner'] },
  );

  it('decodes every input as t.type does: the same value, or the same errors in the same order (property)', () => {
    fc.assert(
      fc.property(fc.oneof({ arbitrary: row, weight: 9 }, { arbitrary: fc.anything(), weight: 1 }), (u) => {
        const a = mine.decode(u);
        const b = theirs.decode(u);
        expect(said(a)).toEqual(said(b));
        // A row that decodes to itself is returned as is, and one that changes is a copy, never the input changed.
        if (E.isRight(a) && E.isRight(b)) expect(a.right === u).toBe(b.right === u);
      }),
      { numRuns: 2000 },
    );
  });

  it('is t.type in everything but validation: name, is, encode, props', () => {
    const good = { id: 'r', status: 'sent' as const, n: 1, at: null, count: 2, note: 'x', inner: { id: 'i', count: 3 } };
    expect(mine.name).toBe(theirs.name);
    expect(mine.is(good)).toBe(true);
    expect(mine.is({ ...good, count: '2' })).toBe(false);
    expect(mine.encode(good)).toEqual(theirs.encode(good));
    expect(Object.keys(mine.props)).toEqual(Object.keys(theirs.props));
    expect(t.exact(mine).decode({ ...good, count: '2', inner: { id: 'i', count: '3' }, extra: 1 })).toEqual(E.right(good));
  });

  it('copies an own __proto__ key (from JSON) as a key, never as the copy’s prototype, where t.type would', () => {
    const withDefaultNote = rowType({ a: t.string, b: withDefault(t.number, 7) });
    const u = JSON.parse('{"__proto__": {"polluted": true}, "a": "s"}') as unknown;
    const r = withDefaultNote.decode(u);
    if (E.isLeft(r)) throw new Error('expected a decoded row');
    expect(Object.getPrototypeOf(r.right)).toBe(Object.prototype);
    expect((r.right as { polluted?: boolean }).polluted).toBeUndefined();
    expect(Object.keys(r.right)).toEqual(['__proto__', 'a', 'b']);
    // The one deliberate difference: io-ts's copy takes that key as its prototype.
    const theirs = t.type({ a: t.string, b: withDefault(t.number, 7) }).decode(u);
    expect(E.isRight(theirs) && (theirs.right as { polluted?: boolean }).polluted).toBe(true);
  });

  it('leaves the input unchanged when a field decodes to another value', () => {
    const input = { id: 'r', status: 'sent', n: 1, at: null, count: '2', inner: { id: 'i', count: '3' } };
    const copy = structuredClone(input);
    expect(mine.decode(input)).toEqual(E.right({ ...input, count: 2, note: 'none', inner: { id: 'i', count: 3 } }));
    expect(input).toEqual(copy);
  });
});
