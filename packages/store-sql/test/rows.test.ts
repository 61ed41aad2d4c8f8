import type { SignatureRequest, StoreError } from '@esig/core';
import { TENANT_A, makeSignatureRequest } from '@esig/testkit';
import fc from 'fast-check';
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import { describe, expect, it } from 'vitest';
import type { ColumnCodecs } from '../src/index.js';
import { Int, RowDecodeError, SignatureRequestData, Timestamp, attemptFilters, checkedAggregate, consistentRequest, decode, endpointRow, requestRow, rowDecoder, signingLinkRow, toEndpoint, toSigningLink } from '../src/index.js';

// A dialect that stores JSON as text and booleans as 0/1, like SQLite: enough to see the shared row
// codecs take their column types from the dialect and nothing else.
const textJson = <A>(inner: t.Type<A, unknown, unknown>) =>
  new t.Type<A, unknown, unknown>(`Json<${inner.name}>`, inner.is, (u, c) => (typeof u === 'string' ? inner.validate(JSON.parse(u), c) : t.failure(u, c)), inner.encode);
const bit = new t.Type<boolean, unknown, unknown>('Bit', (u): u is boolean => typeof u === 'boolean', (u, c) => (u === 0 || u === 1 ? t.success(u === 1) : t.failure(u, c)), Number);
const cols: ColumnCodecs = { timestamp: Timestamp, bigint: Int, flag: bit, json: textJson };

const T = '2026-11-23T08:00:00.000Z';

/** The RowDecodeError a decode failed with (a test failure if it did not). */
const failure = (r: E.Either<StoreError, unknown>): RowDecodeError => {
  if (E.isRight(r) || r.left._tag !== 'StoreFailure' || !(r.left.cause instanceof RowDecodeError)) throw new Error(`expected a RowDecodeError, got ${JSON.stringify(r)}`);
  return r.left.cause;
};
const endpoint = {
  id: 'we_1',
  org_id: 'org_1',
  mode: 'test',
  url: 'https://example.test/hook',
  events: '["request.completed"]',
  description: null,
  enabled: 1,
  disabled_reason: null,
  disabled_at: null,
  secrets: JSON.stringify([{ sealed: 's', createdAt: T, retiresAt: null, extra: 'not stored' }]),
  consecutive_final_failures: 0,
  failing_since: null,
  created_at: T,
  updated_at: T,
  version: 1,
};

describe('shared row codecs', () => {
  const decodeEndpoint = rowDecoder(endpointRow(cols), 'webhook_endpoints', toEndpoint);

  it('decode through the dialect column codecs into the port type, keeping only what the port stores', () => {
    const r = decodeEndpoint(endpoint);
    expect(r).toEqual(
      E.right(
        expect.objectContaining({ id: 'we_1', orgId: 'org_1', events: ['request.completed'], enabled: true, secrets: [{ sealed: 's', createdAt: T, retiresAt: null }] }),
      ),
    );
  });

  it('refuse a column the dialect codec refuses, naming the row', () => {
    expect(failure(decodeEndpoint({ ...endpoint, enabled: true })).message).toMatch(/^Undecodable webhook_endpoints row we_1: enabled: expected Bit, got true$/);
  });

  it('name a row by another key when asked', () => {
    const r = rowDecoder(signingLinkRow(cols), 'signing_links', toSigningLink, 'recipient_id')({ recipient_id: 'rcp_1' });
    expect(failure(r).what).toBe('signing_links row rcp_1');
  });
});

describe('consistentRequest', () => {
  const data = { id: 'req_1', orgId: 'org_1', mode: 'test', status: 'DRAFT', createdAt: T, version: 2 } as unknown as SignatureRequest;
  const Data = new t.Type<SignatureRequest, unknown, unknown>('Data', (u): u is SignatureRequest => true, (u) => t.success(u as SignatureRequest), t.identity);
  const Row = requestRow(cols, Data);
  const row = { id: 'req_1', org_id: 'org_1', mode: 'test', status: 'DRAFT', created_at: T, version: 2, data: JSON.stringify(data) };
  const decoded = (r: unknown) => {
    const d = Row.decode(r);
    if (E.isLeft(d)) throw new Error('row should decode');
    return d.right;
  };

  it('serves the aggregate when the copied columns agree with it', () => {
    expect(consistentRequest(decoded(row))).toEqual(E.right(data));
  });

  it('refuses a row whose columns disagree with its data, listing each clash', () => {
    const err = failure(consistentRequest(decoded({ ...row, status: 'SENT', version: 3 })));
    expect(err.what).toBe('signature_requests row req_1');
    expect(err.problems).toEqual(['column status is SENT but data says DRAFT', 'column version is 3 but data says 2']);
  });
});

describe('attemptFilters', () => {
  it('filters by whichever of endpoint and event is given', () => {
    expect(attemptFilters({})).toEqual([]);
    expect(attemptFilters({ eventId: 'evt_1' })).toEqual([['event_id', 'evt_1']]);
    expect(attemptFilters({ endpointId: 'we_1', eventId: 'evt_1' })).toEqual([
      ['endpoint_id', 'we_1'],
      ['event_id', 'evt_1'],
    ]);
  });
});

describe('checkedAggregate', () => {
  const problems = (r: E.Either<StoreError, unknown>) => (E.isRight(r) ? { value: r.right } : { problems: failure(r).problems });
  // Every path to a value inside an aggregate (keys, and indexes into lists).
  const paths = (u: unknown, at: readonly (string | number)[] = []): (readonly (string | number)[])[] =>
    typeof u === 'object' && u !== null
      ? Object.entries(u).flatMap(([k, v]) => [[...at, Array.isArray(u) ? Number(k) : k], ...paths(v, [...at, Array.isArray(u) ? Number(k) : k])])
      : [];
  const withChange = (u: unknown, path: readonly (string | number)[], change: { delete: true } | { value: unknown }): unknown => {
    const copy: unknown = structuredClone(u);
    let parent = copy as Record<string | number, unknown>;
    for (const k of path.slice(0, -1)) parent = parent[k] as Record<string | number, unknown>;
    const last = path[path.length - 1]!;
    if ('delete' in change) delete parent[last];
    else parent[last] = change.value;
    return copy;
  };
  const aggregates = [
    makeSignatureRequest(TENANT_A),
    makeSignatureRequest(TENANT_A, { recipients: [], fields: [], message: null, status: 'DRAFT' }),
    makeSignatureRequest(TENANT_A, { status: 'COMPLETED', completedAt: T, finishedSha256: 'f'.repeat(64), certificateId: 'cert_1' }),
  ];

  it('passes a valid aggregate through as it is, and refuses a broken one as the codec does', () => {
    for (const a of aggregates) expect(checkedAggregate(a)).toEqual(E.right(a));
    const broken = { ...aggregates[0]!, version: 1.5, title: 7 };
    expect(problems(checkedAggregate(broken as unknown as SignatureRequest))).toEqual(problems(decode(SignatureRequestData, 'x')(broken)));
    // A list with a hole: io-ts's own list `is` skips it, and the row would hold a null recipient that no read
    // could decode (found by the property below).
    const holed = structuredClone(aggregates[0]!) as unknown as { recipients: unknown[] };
    delete holed.recipients[0];
    expect(E.isLeft(checkedAggregate(holed as unknown as SignatureRequest))).toBe(true);
  });

  // The shortcut rests on this: whatever the codec's `is` accepts, decoding it gives back the same value.
  it('agrees with decoding for any one change anywhere in an aggregate: a key removed, or any value put in its place', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...aggregates).chain((a) => fc.tuple(fc.constant(a), fc.constantFrom(...paths(a)))),
        fc.oneof(fc.constant({ delete: true } as const), fc.anything().map((value) => ({ value })), fc.constantFrom(null, undefined, T, 'x', 0, 1.5, true).map((value) => ({ value }))),
        ([a, path], change) => {
          const changed = withChange(a, path, change);
          const decoded = decode(SignatureRequestData, `new signature_requests data ${a.id}`)(changed);
          if (SignatureRequestData.is(changed)) expect(decoded).toEqual(E.right(changed));
          expect(problems(checkedAggregate(changed as SignatureRequest))).toEqual(problems(decoded));
        },
      ),
    );
  });
});
