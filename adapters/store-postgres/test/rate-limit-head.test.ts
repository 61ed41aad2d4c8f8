import { createManualClock } from '@esig/testkit';
import fc from 'fast-check';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgresStore } from '../src/index.js';
import { loadMigrations, migrate } from '../src/migrations.js';
import type { TestDatabase } from './pg.js';
import { available, createTestDatabase } from './pg.js';

/**
 * Migration 0011 reads a bucket's log from its kept head, by probing seqs, where migration 0010's function
 * scanned it. Same results are the claim: the two functions, each on a database of its own, are given the
 * same random histories and must answer every call alike (rows or error code). The histories hold what could
 * set them apart: one to three buckets with limits that change from call to call, windows that change,
 * times that go back and forth, batches of 0 to 40 calls, sweeps, hits left behind by a sweep, and rows
 * deleted by hand (holes, which 0011 meets with 0010's scan). After each history, every bucket's log on the
 * 0011 side is exactly its seqs first_seq .. next_seq - 1 unless a hole was made.
 */

const CONSUME = 'SELECT * FROM esig_rate_limit_consume_many($1::text[], $2::integer[], $3::bigint, $4::bigint, $5::integer)';
const START = Date.parse('2026-11-23T08:00:00.000Z');
const NAMES = ['a', 'b', 'c'] as const;

type Op =
  | { kind: 'consume'; names: readonly string[]; limits: readonly number[]; windowMs: number; dt: number; count: number }
  | { kind: 'sweep'; back: number }
  | { kind: 'orphan'; name: string; seqs: readonly number[] }
  | { kind: 'hole'; name: string; pick: number };

const consume = fc
  .record({
    names: fc.subarray([...NAMES], { minLength: 1 }),
    limits: fc.array(fc.oneof(fc.integer({ min: 1, max: 6 }), fc.integer({ min: 1, max: 80 })), { minLength: 3, maxLength: 3 }),
    windowMs: fc.constantFrom(1_000, 2_500),
    dt: fc.oneof(fc.integer({ min: 0, max: 400 }), fc.integer({ min: 0, max: 20 }), fc.integer({ min: -1_500, max: 2_500 })),
    count: fc.oneof(fc.constant(1), fc.integer({ min: 0, max: 8 }), fc.integer({ min: 0, max: 40 })),
  })
  .map((r): Op => ({ kind: 'consume', ...r, limits: r.limits.slice(0, r.names.length) }));

const history = (holes: boolean) =>
  fc.array(
    fc.oneof(
      { weight: 12, arbitrary: consume },
      { weight: 1, arbitrary: fc.integer({ min: 0, max: 3_000 }).map((back): Op => ({ kind: 'sweep', back })) },
      {
        weight: 1,
        arbitrary: fc
          .record({ name: fc.constantFrom(...NAMES), seqs: fc.array(fc.integer({ min: 0, max: 12 }), { minLength: 1, maxLength: 4 }) })
          .map((r): Op => ({ kind: 'orphan', ...r })),
      },
      { weight: holes ? 1 : 0, arbitrary: fc.record({ name: fc.constantFrom(...NAMES), pick: fc.nat() }).map((r): Op => ({ kind: 'hole', ...r })) },
    ),
    { minLength: 1, maxLength: 40 },
  );

/** What `ops` get from the function on `c`, their bucket names under `prefix` (a history's own buckets). */
const replay = async (c: pg.Client, prefix: string, ops: readonly Op[]): Promise<unknown[]> => {
  const out: unknown[] = [];
  let now = START;
  for (const op of ops) {
    if (op.kind === 'consume') {
      now += op.dt;
      const answer = await c.query(CONSUME, [op.names.map((n) => prefix + n), op.limits, op.windowMs, now, op.count]).then(
        (r) => r.rows.map((row: { bucket: string }) => ({ ...row, bucket: row.bucket.slice(prefix.length) })),
        (e: unknown) => ({ error: (e as { code?: string }).code ?? String(e) }),
      );
      out.push(answer);
    } else if (op.kind === 'sweep') {
      await c.query('SELECT esig_rate_limit_sweep($1)', [now - op.back]);
    } else if (op.kind === 'orphan') {
      // What a sweep racing a call leaves (migration 0004): hits of a bucket with no row.
      const r = await c.query('SELECT 1 FROM rate_limit_buckets WHERE bucket = $1', [prefix + op.name]);
      if (r.rowCount === 0)
        await c.query('INSERT INTO rate_limit_hits (bucket, seq, at_ms) SELECT $1, s, $3 FROM unnest($2::bigint[]) AS s ON CONFLICT DO NOTHING', [prefix + op.name, op.seqs, now]);
    } else {
      const r = await c.query<{ seq: string }>('SELECT seq FROM rate_limit_hits WHERE bucket = $1 ORDER BY seq', [prefix + op.name]);
      if (r.rows.length > 0) await c.query('DELETE FROM rate_limit_hits WHERE bucket = $1 AND seq = $2', [prefix + op.name, r.rows[op.pick % r.rows.length]!.seq]);
    }
  }
  return out;
};

/** The buckets under `prefix` whose log is not exactly first_seq .. next_seq - 1. */
const notContiguous = async (c: pg.Client, prefix: string) => {
  const r = await c.query<{ bucket: string; first_seq: string; next_seq: string; n: string; lo: string | null; hi: string | null }>(
    `SELECT w.bucket, w.first_seq, w.next_seq, count(x.seq) AS n, min(x.seq) AS lo, max(x.seq) AS hi
     FROM rate_limit_buckets w LEFT JOIN rate_limit_hits x ON x.bucket = w.bucket
     WHERE starts_with(w.bucket, $1) GROUP BY w.bucket, w.first_seq, w.next_seq`,
    [prefix],
  );
  return r.rows.filter(
    (w) => Number(w.n) !== Number(w.next_seq) - Number(w.first_seq) || (Number(w.n) > 0 && (Number(w.lo) !== Number(w.first_seq) || Number(w.hi) !== Number(w.next_seq) - 1)),
  );
};

describe.skipIf(!available)("the rate limiter's head (migration 0011) decides as migration 0010's scan did", () => {
  let v10: TestDatabase;
  let v11: TestDatabase;
  let c10: pg.Client;
  let c11: pg.Client;
  let runs = 0;
  beforeAll(async () => {
    [v10, v11] = await Promise.all([createTestDatabase(), createTestDatabase()]);
    await v10.raw((c) => migrate(c, loadMigrations().slice(0, 10)));
    await v11.raw((c) => migrate(c, loadMigrations().slice(0, 11)));
    // A function broken so that its search never ends is cancelled by the server, not left running until the
    // database is dropped (the test fails either way: its answer is an error where 0010 answers rows).
    c10 = new pg.Client({ connectionString: v10.url, statement_timeout: 10_000 });
    c11 = new pg.Client({ connectionString: v11.url, statement_timeout: 10_000 });
    await Promise.all([c10.connect(), c11.connect()]);
  });
  afterAll(async () => {
    await Promise.all([c10?.end(), c11?.end()]);
    await Promise.all([v10?.drop(), v11?.drop()]);
  });

  it('the same answers over random histories, and every log contiguous from its head (property)', async () => {
    await fc.assert(
      fc.asyncProperty(history(false), async (ops) => {
        const prefix = `p${runs++}:`;
        expect(await replay(c11, prefix, ops)).toEqual(await replay(c10, prefix, ops));
        expect(await notContiguous(c11, prefix)).toEqual([]);
      }),
      { numRuns: 120 },
    );
  });

  it('the same answers when rows are deleted by hand (property)', async () => {
    await fc.assert(
      fc.asyncProperty(history(true), async (ops) => {
        const prefix = `h${runs++}:`;
        expect(await replay(c11, prefix, ops)).toEqual(await replay(c10, prefix, ops));
      }),
      { numRuns: 80 },
    );
  });
});

describe.skipIf(!available)('upgrading to migration 0011', () => {
  it('keeps the windows of logs written before: each starts at its lowest row', async () => {
    const old = await createTestDatabase();
    try {
      await old.raw((c) => migrate(c, loadMigrations().slice(0, 10)));
      // Version 10's function: 5 calls, then 2 of them leave the window (and are deleted by the next call).
      await old.raw(async (c) => {
        for (let i = 0; i < 5; i++) await c.query(CONSUME, [['key:k'], [6], 1_000, START + i * 100, 1]);
        await c.query(CONSUME, [['key:k'], [6], 1_000, START + 1_150, 1]);
      });
      const s = await openPostgresStore({ url: old.url });
      try {
        const head = await s.pool.query<{ first_seq: string; next_seq: string }>("SELECT first_seq, next_seq FROM rate_limit_buckets WHERE bucket = 'key:k'");
        expect(head.rows).toEqual([{ first_seq: '2', next_seq: '6' }]);
        // In the window at START + 1,250: the calls at +300, +400 and +1,150 (+200 has left too), so this one and 2 more fit.
        const limiter = s.rateLimiter(1_000, createManualClock(new Date(START + 1_250)));
        expect(await limiter.consume([{ id: 'key:k', limit: 6 }])()).toMatchObject({ allowed: true, remaining: 2 });
        for (let i = 0; i < 2; i++) expect((await limiter.consume([{ id: 'key:k', limit: 6 }])()).allowed).toBe(true);
        expect((await limiter.consume([{ id: 'key:k', limit: 6 }])()).allowed).toBe(false);
      } finally {
        await s.close();
      }
    } finally {
      await old.drop();
    }
  });
});
