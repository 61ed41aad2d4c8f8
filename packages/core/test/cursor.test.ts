import fc from 'fast-check';
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import type { CursorContext, CursorPayload } from '@esig/core/internal';
import { decodeCursor, encodeCursor } from '@esig/core/internal';
import { anyCharArb, asciiString, cursorPayloadArb } from './arbitraries.js';
import { hmacCursorSigner } from './support.js';

const signer = hmacCursorSigner('server-cursor-key');
const contextOf = (p: CursorPayload): CursorContext => ({ list: p.list, order: p.order, filter: p.filter });

const expectRejected = (r: E.Either<unknown, unknown>) => {
  expect(E.isLeft(r)).toBe(true);
  if (E.isLeft(r)) expect(r.left).toMatchObject({ _tag: 'ValidationFailed', errors: [{ path: 'cursor' }] });
};

describe('cursors', () => {
  it('decode what they encode, for any ASCII payload', () => {
    fc.assert(
      fc.property(cursorPayloadArb, (p) => {
        const cursor = encodeCursor(signer, p);
        expect(cursor).toMatch(/^[A-Za-z0-9_-]+\.[0-9a-f]{64}$/);
        expect(decodeCursor(signer, cursor, contextOf(p))).toEqual(E.right({ createdAt: p.createdAt, id: p.id }));
      }),
      { numRuns: 500 },
    );
  });

  it('reject any single-character change', () => {
    fc.assert(
      fc.property(cursorPayloadArb, fc.nat(), anyCharArb, (p, at, ch) => {
        const cursor = encodeCursor(signer, p);
        const i = at % cursor.length;
        fc.pre(cursor[i] !== ch);
        expectRejected(decodeCursor(signer, cursor.slice(0, i) + ch + cursor.slice(i + 1), contextOf(p)));
      }),
      { numRuns: 500 },
    );
  });

  it('reject any truncation, any appended text and any deleted character', () => {
    fc.assert(
      fc.property(cursorPayloadArb, fc.nat(), fc.string({ unit: anyCharArb, minLength: 1, maxLength: 4 }), (p, at, extra) => {
        const cursor = encodeCursor(signer, p);
        const ctx = contextOf(p);
        const i = at % cursor.length;
        expectRejected(decodeCursor(signer, cursor.slice(0, i), ctx));
        expectRejected(decodeCursor(signer, cursor + extra, ctx));
        expectRejected(decodeCursor(signer, extra + cursor, ctx));
        expectRejected(decodeCursor(signer, cursor.slice(0, i) + cursor.slice(i + 1), ctx));
      }),
      { numRuns: 300 },
    );
  });

  it('reject a cursor of another list, order or filter', () => {
    fc.assert(
      fc.property(
        cursorPayloadArb,
        fc.record({ list: asciiString(20), order: fc.constantFrom('asc' as const, 'desc' as const), filter: asciiString() }),
        (p, other) => {
          const ctx = contextOf(p);
          fc.pre(other.list !== ctx.list || other.order !== ctx.order || other.filter !== ctx.filter);
          expectRejected(decodeCursor(signer, encodeCursor(signer, p), other));
        },
      ),
      { numRuns: 300 },
    );
    // The same with one part changed at a time.
    fc.assert(
      fc.property(cursorPayloadArb, asciiString(), (p, s) => {
        const ctx = contextOf(p);
        const c = encodeCursor(signer, p);
        if (s !== ctx.list) expectRejected(decodeCursor(signer, c, { ...ctx, list: s }));
        if (s !== ctx.filter) expectRejected(decodeCursor(signer, c, { ...ctx, filter: s }));
        expectRejected(decodeCursor(signer, c, { ...ctx, order: ctx.order === 'asc' ? 'desc' : 'asc' }));
      }),
    );
  });

  it('reject a cursor signed with another key', () => {
    fc.assert(
      fc.property(cursorPayloadArb, fc.string({ minLength: 1 }), (p, key) => {
        fc.pre(key !== 'server-cursor-key');
        expectRejected(decodeCursor(signer, encodeCursor(hmacCursorSigner(key), p), contextOf(p)));
      }),
    );
  });

  it('reject text that is not a cursor at all', () => {
    fc.assert(
      fc.property(fc.string({ unit: anyCharArb, maxLength: 120 }), (s) => {
        expectRejected(decodeCursor(signer, s, { list: 'documents', order: 'desc', filter: 'status=' }));
      }),
    );
  });

  it('refuse to encode a payload that is not ASCII (a bug, so it throws)', () => {
    expect(() => encodeCursor(signer, { list: 'documents', order: 'asc', filter: 'é', createdAt: '', id: '' })).toThrow();
  });
});
