import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import { decode } from '../src/decode.js';
import { dateTime, nullable, object, oneOf } from '../src/schema.js';

const problems = (r: E.Either<{ errors?: readonly { path: string; message: string }[] }, unknown>) => (E.isLeft(r) ? r.left.errors : []);

describe('decode: the messages a client reads', () => {
  it('an enumeration names its allowed values, not the codec', () => {
    const codec = object({ status: oneOf(['draft', 'sent'] as const, 'Status') });
    expect(problems(decode(codec, { status: 'FOO' }))).toEqual([{ path: 'status', message: 'must be one of: draft, sent' }]);
  });

  it('a nullable field with a wrong value says what is wrong with the value, not also that it must be null', () => {
    const codec = object({ expiresAt: nullable(dateTime) });
    expect(problems(decode(codec, { expiresAt: '2027-02-30T00:00:00Z' }))).toEqual([{ path: 'expiresAt', message: 'is not a valid date-time' }]);
    expect(E.isRight(decode(codec, { expiresAt: null }))).toBe(true);
  });
});
