import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { preparedStatements, queryConfig } from '../src/connection.js';
import type { Prepared } from '../src/connection.js';
import { ATTACH, ATTACH_ONE, ATTACH_ONE_RAISING, ATTACH_RAISING, FIND_BY_ID as DOCUMENT_BY_ID, FIND_BY_IDS, FIND_ONE } from '../src/documents.js';
import { COMPLETE as IDEMPOTENCY_COMPLETE, FIND as IDEMPOTENCY_FIND } from '../src/idempotency.js';
import '../src/index.js';
import { COMPLETE as JOB_COMPLETE } from '../src/jobs.js';
import { FIND_BY_ID as REQUEST_BY_ID, FIND_BY_ID_FOR_UPDATE as REQUEST_BY_ID_FOR_UPDATE } from '../src/signature-requests.js';
import { FIND_WITH_ENDPOINT, UPDATE_DELIVERY } from '../src/webhook-deliveries.js';
import { CLEAR_FAILURES } from '../src/webhook-endpoints.js';
import { available, migratedTestClient } from './pg.js';

/**
 * A statement prepared on a connection may run on the generic plan PostgreSQL made for it once, for the
 * tables' sizes at that moment, until their statistics change. After an ANALYZE of a small table a
 * sequential scan is the cheaper plan even for one row by primary key, and with autovacuum off the
 * connection would go on scanning the whole table at every call while it grows. Whatever size the tables
 * had when they were last analyzed (or none: never analyzed), each statement a request or a delivery runs
 * by name must read only its own rows once they have grown.
 */
const TABLES = ['documents', 'signature_requests', 'idempotency_keys', 'webhook_endpoints', 'webhook_deliveries', 'jobs'];

/** Rows of one org in each table, as a service accumulates them. */
const grow = (from: number, to: number) => `
  INSERT INTO documents (id, org_id, mode, name, status, page_count, size_bytes, sha256, signature_request_id, created_at)
    SELECT 'doc_' || lpad(i::text, 26, '0'), 'org_big', 'test', 'd.pdf', 'UPLOADED', 1, 100, repeat('a', 64), NULL,
           timestamptz '2026-01-01' + i * interval '1 second'
    FROM generate_series(${from + 1}, ${to}) AS i;
  INSERT INTO signature_requests (id, org_id, mode, status, created_at, version, data)
    SELECT 'req_' || lpad(i::text, 26, '0'), 'org_big', 'test', 'DRAFT', timestamptz '2026-01-01' + i * interval '1 second', 1, '{}'
    FROM generate_series(${from + 1}, ${to}) AS i;
  INSERT INTO idempotency_keys (org_id, mode, key, fingerprint, state, response, created_at, locked_until, expires_at)
    SELECT 'org_big', 'test', 'key_' || i, 'f', 'in_progress', NULL, timestamptz '2026-01-01', timestamptz '2026-01-01', timestamptz '2026-01-02'
    FROM generate_series(${from + 1}, ${to}) AS i;
  INSERT INTO webhook_endpoints (id, org_id, mode, url, events, description, enabled, disabled_reason, disabled_at, secrets,
                                 consecutive_final_failures, failing_since, created_at, updated_at, version)
    SELECT 'whe_' || lpad(i::text, 26, '0'), 'org_big', 'test', 'https://h.example/' || i, '["request.sent"]', NULL, true, NULL, NULL,
           '[]', 0, NULL, timestamptz '2026-01-01' + i * interval '1 second', timestamptz '2026-01-01', 1
    FROM generate_series(${from + 1}, ${to}) AS i;
  INSERT INTO webhook_deliveries (id, org_id, mode, endpoint_id, event_id, event_type, body, status, attempts, created_at, version)
    SELECT 'dlv_' || lpad(i::text, 26, '0'), 'org_big', 'test', 'whe_' || lpad(i::text, 26, '0'), 'evt_' || i, 'request.sent', '{}',
           'pending', 0, timestamptz '2026-01-01' + i * interval '1 second', 1
    FROM generate_series(${from + 1}, ${to}) AS i;
  INSERT INTO jobs (id, kind, org_id, mode, payload, run_at, attempts, dedupe_key, created_at, locked_by, locked_until)
    SELECT 'job_' || lpad(i::text, 26, '0'), 'webhook.deliver', 'org_big', 'test', '{}', timestamptz '2026-01-01', 0, NULL,
           timestamptz '2026-01-01', 'w1', timestamptz '2026-01-01 00:10'
    FROM generate_series(${from + 1}, ${to}) AS i`;

const id = (prefix: string, i: number) => `${prefix}_${String(i).padStart(26, '0')}`;

/**
 * Each statement, the table whose rows it reads, its parameters, and the most rows it may read there. `first`: the
 * number of the first row they name.
 */
const statements = (ids: number, first = 7): ReadonlyArray<readonly [string, string, Prepared, readonly unknown[], number]> => {
  const docs = Array.from({ length: ids }, (_, i) => id('doc', first + i));
  return [
    [`a create-request's ${ids} documents`, 'documents', FIND_BY_IDS, ['org_big', 'test', docs], ids],
    // Answered, it locks and counts, then writes: two reads of each.
    [`a create-request's ${ids} documents attached`, 'documents', ATTACH, ['org_big', 'test', docs, 'req_new', ids, 500], 2 * ids],
    [`a create-request's ${ids} documents attached, sent unanswered`, 'documents', ATTACH_RAISING, ['org_big', 'test', docs, 'req_new', ids, 500], ids],
    // A create-request of one document (the store's statements for one).
    ["a create-request's one document", 'documents', FIND_ONE, ['org_big', 'test', docs[0]], 1],
    ["a create-request's one document attached", 'documents', ATTACH_ONE, ['org_big', 'test', docs[0], 'req_new', 500], 1],
    ["a create-request's one document attached, sent unanswered", 'documents', ATTACH_ONE_RAISING, ['org_big', 'test', docs[0], 'req_new', 500], 1],
    ['a document by id', 'documents', DOCUMENT_BY_ID, [id('doc', first), 'org_big', 'test'], 1],
    ['a request by id', 'signature_requests', REQUEST_BY_ID, [id('req', first), 'org_big', 'test'], 1],
    ['a request by id, locked', 'signature_requests', REQUEST_BY_ID_FOR_UPDATE, [id('req', first), 'org_big', 'test'], 2],
    ['an idempotency record', 'idempotency_keys', IDEMPOTENCY_FIND, ['org_big', 'test', `key_${first}`], 1],
    ['an idempotency record completed', 'idempotency_keys', IDEMPOTENCY_COMPLETE.text as Prepared, ['{}', 'org_big', 'test', `key_${first}`, 'f', '2026-01-01T00:00:00.000Z'], 1],
    ['an idempotency record completed, sent unanswered', 'idempotency_keys', IDEMPOTENCY_COMPLETE.raising as Prepared, ['{}', 'org_big', 'test', `key_${first}`, 'f', '2026-01-01T00:00:00.000Z'], 1],
    ['a delivery with its endpoint', 'webhook_deliveries', FIND_WITH_ENDPOINT, [[id('dlv', first)], ['org_big'], ['test']], 1],
    ['a delivery updated', 'webhook_deliveries', UPDATE_DELIVERY.text as Prepared, ['succeeded', 1, null, '2026-01-01T00:00:00Z', 'ok', 2, id('dlv', first), 'org_big', 'test'], 1],
    ['a delivery updated, sent unanswered', 'webhook_deliveries', UPDATE_DELIVERY.raising as Prepared, ['succeeded', 1, null, '2026-01-01T00:00:00Z', 'ok', 2, id('dlv', first), 'org_big', 'test'], 1],
    ['an endpoint healthy again', 'webhook_endpoints', CLEAR_FAILURES, ['2026-01-01T00:00:00Z', id('whe', first), 'org_big', 'test'], 1],
    ['a job done', 'jobs', JOB_COMPLETE.text as Prepared, [id('job', first), 'w1'], 1],
    ['a job done, sent unanswered', 'jobs', JOB_COMPLETE.raising as Prepared, [id('job', first), 'w1'], 1],
  ];
};

/**
 * What one statement read of `table`, from the transaction's own counters: its rows (by a sequential scan or
 * fetched through an index), the entries its scans took from the table's indexes (a scan of a whole index
 * whose pages are all visible fetches no row, so the rows alone would miss it), and the pages of the table and
 * its indexes it touched (a walk of a whole index whose first column is not the key, for the one entry that
 * matches, returns one entry: only its pages show it). Rolled back: nothing changes.
 */
const readOf = async (c: pg.PoolClient, table: string, stmt: Prepared, params: readonly unknown[]): Promise<{ rows: number; entries: number; pages: number }> => {
  const read = async () => {
    const r = await c.query<{ rows: string; entries: string; pages: string }>(
      `SELECT (SELECT seq_tup_read + COALESCE(idx_tup_fetch, 0) FROM pg_stat_xact_user_tables WHERE relid = $1::regclass) AS rows,
              (SELECT COALESCE(sum(pg_stat_get_xact_tuples_returned(indexrelid)), 0) FROM pg_index WHERE indrelid = $1::regclass) AS entries,
              (SELECT sum(pg_stat_get_xact_blocks_fetched(oid)) FROM pg_class
                WHERE oid = $1::regclass OR oid IN (SELECT indexrelid FROM pg_index WHERE indrelid = $1::regclass)) AS pages`,
      [table],
    );
    return { rows: Number(r.rows[0]!.rows), entries: Number(r.rows[0]!.entries), pages: Number(r.rows[0]!.pages) };
  };
  await c.query('BEGIN');
  try {
    const before = await read();
    await c.query(queryConfig(stmt, params));
    const after = await read();
    return { rows: after.rows - before.rows, entries: after.entries - before.entries, pages: after.pages - before.pages };
  } finally {
    await c.query('ROLLBACK');
  }
};

/** Runs every statement on `c` ten times, as a long-lived connection does; the writes are rolled back. */
const useOften = async (c: pg.PoolClient, all: ReturnType<typeof statements>) => {
  await c.query('BEGIN');
  for (const [, , stmt, params] of all)
    for (let i = 0; i < 10; i++) {
      await c.query('SAVEPOINT s');
      await c.query(queryConfig(stmt, params)).catch(() => undefined);
      await c.query('ROLLBACK TO SAVEPOINT s');
    }
  await c.query('ROLLBACK');
};

describe.skipIf(!available)('prepared statements on a long-lived connection, whatever the tables held when last analyzed', () => {
  /*
   * Each state: the tables' rows when they were analyzed (or never), and whether the connection used its statements
   * before that ANALYZE too. A plan is made again after an ANALYZE, and PostgreSQL keeps the custom plans' average
   * cost from before, so used first on tables never analyzed, then analyzed with a row or none, a statement gets a
   * generic plan it would not have got in the other order (an attacker's review found two: 212 and 189 pages).
   */
  it.each([
    ['never analyzed', null, false],
    ['analyzed empty', 0, false],
    ['analyzed at 1 row', 1, false],
    ['analyzed at 60 rows', 60, false],
    ['analyzed at 3,000 rows', 3_000, false],
    ['used while never analyzed, then analyzed empty', 0, true],
    ['used while never analyzed, then analyzed at 1 row', 1, true],
  ] as const)(
    '%s, then grown to 20,000 rows: each reads only its own rows',
    async (_, analyzedAt, usedBefore) => {
      const db = await migratedTestClient();
      const c = db.client;
      try {
        await c.query(TABLES.map((t) => `ALTER TABLE ${t} SET (autovacuum_enabled = false)`).join('; '));
        if (analyzedAt !== null && analyzedAt > 0) await c.query(grow(0, analyzedAt));
        const all = [...statements(1), ...statements(20).slice(0, 3)];
        // Used on other rows than those measured: the rolled-back writes of using them leave dead versions of the rows
        // they change (on the row's own page when it has room, one index entry for them all), which the measure would
        // count as entries of the row's own. The plans a connection keeps are the statements', whatever rows.
        const warm = [...statements(1, 107), ...statements(20, 107).slice(0, 3)];
        if (usedBefore) await useOften(c, warm);
        if (analyzedAt !== null) await c.query(`ANALYZE ${TABLES.join(', ')}`);
        await useOften(c, warm);
        for (let rows = analyzedAt ?? 0; rows < 20_000; rows += 5_000) await c.query(grow(rows, Math.min(rows + 5_000, 20_000)));
        for (const [name, table, stmt, params, most] of all) {
          const read = await readOf(c, table, stmt, params);
          expect(read.rows, `${name}: rows`).toBeLessThanOrEqual(most);
          // A few more entries than rows (an update finds its row again to write it, a new entry is checked for
          // uniqueness), nowhere near the 20,000 of a scan of a whole index.
          expect(read.entries, `${name}: index entries`).toBeLessThanOrEqual(2 * most + 5);
          // At 20,000 rows a walk of a whole index of these tables touches 150-230 pages; finding a listed row
          // through its key takes 3-5, and writing it with an entry in each of its table's indexes up to 20.
          expect(read.pages, `${name}: pages`).toBeLessThanOrEqual(25 * most + 20);
        }
      } finally {
        await db.close();
      }
    },
    60_000,
  );

  it("the rate limiter's function reads a few rows whatever its tables grew to since their ANALYZE", async () => {
    const db = await migratedTestClient();
    const c = db.client;
    const CALL = 'SELECT * FROM esig_rate_limit_consume_many($1::text[], $2::integer[], $3::bigint, $4::bigint, $5::integer)';
    const call = (at: number) => c.query(CALL, [['key:k1', 'org:o1'], [1_000_000, 1_000_000], 60_000, at, 1]);
    const readOfCall = async (at: number) => {
      const read = async () => {
        const r = await c.query<{ n: string }>(
          "SELECT sum(seq_tup_read + COALESCE(idx_tup_fetch, 0)) AS n FROM pg_stat_xact_user_tables WHERE relname IN ('rate_limit_hits', 'rate_limit_buckets')",
        );
        return Number(r.rows[0]!.n);
      };
      await c.query('BEGIN');
      try {
        const before = await read();
        await call(at);
        return (await read()) - before;
      } finally {
        await c.query('ROLLBACK');
      }
    };
    try {
      await c.query('ALTER TABLE rate_limit_hits SET (autovacuum_enabled = false); ALTER TABLE rate_limit_buckets SET (autovacuum_enabled = false)');
      const t0 = 1_800_000_000_000;
      // Small tables, analyzed; then the connection's calls (PL/pgSQL would settle on generic plans after five).
      for (let i = 0; i < 3; i++) await call(t0 + i);
      await c.query('ANALYZE rate_limit_hits, rate_limit_buckets');
      for (let i = 3; i < 20; i++) await call(t0 + i);
      const small = await readOfCall(t0 + 20);
      // Other keys' calls since: 2,000 buckets with 50 calls each in the window.
      await c.query(`
        INSERT INTO rate_limit_buckets (bucket, next_seq, newest_ms, first_seq) SELECT 'key:other' || b, 50, ${t0}, 0 FROM generate_series(1, 2000) b;
        INSERT INTO rate_limit_hits (bucket, seq, at_ms) SELECT 'key:other' || b, s, ${t0} FROM generate_series(1, 2000) b, generate_series(0, 49) s`);
      // With the plans kept from the small tables it read every bucket: 4,007 rows (migration 0013 says how it is mended).
      expect(await readOfCall(t0 + 21)).toBeLessThanOrEqual(small + 4);
      // The job queue's functions plan at every call; the rate limiter's keeps its plans, with sequential scans off
      // (migration 0013). A CREATE OR REPLACE that forgot them would drop the settings.
      const settings = await c.query<{ proname: string; proconfig: string[] | null }>(
        "SELECT proname, proconfig FROM pg_proc WHERE proname IN ('esig_rate_limit_consume_many', 'esig_jobs_claim', 'esig_jobs_next_run_at') ORDER BY proname",
      );
      const has = (r: { proconfig: string[] | null }, setting: string) => r.proconfig?.includes(setting) ?? false;
      expect(settings.rows.map((r) => [r.proname, has(r, 'plan_cache_mode=force_custom_plan'), has(r, 'enable_seqscan=off')])).toEqual([
        ['esig_jobs_claim', true, false],
        ['esig_jobs_next_run_at', true, false],
        ['esig_rate_limit_consume_many', false, true],
      ]);
    } finally {
      await db.close();
    }
  });

  it.each([['never analyzed', null], ['analyzed at 3,000 rows', 3_000]] as const)(
    '%s: an idempotency record is completed on a generic plan after a few calls, and an endpoint made healthy is planned at every call',
    async (_, analyzedAt) => {
      // Planned at every call, the completion's raising form cost a backend about 70 µs per command with a key
      // (docs/performance.md, twenty-third round); an endpoint's reset kept plans that walked an index.
      const db = await migratedTestClient();
      const c = db.client;
      try {
        if (analyzedAt !== null) await c.query(`${grow(0, analyzedAt)}; ANALYZE ${TABLES.join(', ')}`);
        const all = statements(1);
        await useOften(c, all);
        const generic = await c.query<{ name: string; generic_plans: string }>('SELECT name, generic_plans FROM pg_prepared_statements');
        const kept = new Set(generic.rows.filter((r) => Number(r.generic_plans) > 0).map((r) => r.name));
        // The raising forms are planned at every call, but where only the primary key's index can serve the change;
        // so are the lookups and attaches of several documents, whose generic plans assume ten.
        expect(
          [
            IDEMPOTENCY_COMPLETE.raising,
            UPDATE_DELIVERY.raising,
            CLEAR_FAILURES,
            FIND_ONE,
            DOCUMENT_BY_ID,
            ATTACH_ONE,
            ATTACH_ONE_RAISING,
            REQUEST_BY_ID,
            REQUEST_BY_ID_FOR_UPDATE,
            FIND_BY_IDS,
            ATTACH_RAISING,
          ].map((p) => [
            (p as Prepared).name,
            kept.has((p as Prepared).name),
          ]),
        ).toEqual([
          [(IDEMPOTENCY_COMPLETE.raising as Prepared).name, true],
          [(UPDATE_DELIVERY.raising as Prepared).name, false],
          [CLEAR_FAILURES.name, false],
          [FIND_ONE.name, true],
          [DOCUMENT_BY_ID.name, true],
          [ATTACH_ONE.name, true],
          [ATTACH_ONE_RAISING.name, true],
          [REQUEST_BY_ID.name, true],
          [REQUEST_BY_ID_FOR_UPDATE.name, true],
          [FIND_BY_IDS.name, false],
          [ATTACH_RAISING.name, false],
        ]);
        // What lets one document's statements and a request's lookups keep theirs: no index of either table but its
        // primary key holds \`id\` in the column's collation (migrations 0015 and 0017), so none other can serve \`id = $n\`.
        const byId = await c.query<{ index: string }>(
          `SELECT i.indexrelid::regclass::text AS index FROM pg_index i
           JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
           WHERE i.indrelid IN ('documents'::regclass, 'signature_requests'::regclass) AND a.attname = 'id'
             AND i.indcollation[array_position(i.indkey::int2[], a.attnum)] = a.attcollation
           ORDER BY 1`,
        );
        expect(byId.rows.map((r) => r.index)).toEqual(['documents_pkey', 'signature_requests_pkey']);
        // What lets the idempotency record's completion keep its plan: no other index holds a column of its key.
        const others = await c.query<{ column: string }>(
          `SELECT a.attname AS column FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
           WHERE i.indrelid = 'idempotency_keys'::regclass AND NOT i.indisprimary`,
        );
        expect(others.rows.map((r) => r.column).filter((col) => ['org_id', 'mode', 'key'].includes(col))).toEqual([]);
      } finally {
        await db.close();
      }
    },
    60_000,
  );

  it('keeps a generic plan only for statements with no plan of their own to choose, and for the key lookups it keeps on purpose', () => {
    // An insert of one row, or of arrays' rows, has no plan to choose (a conflict is found through the index it
    // names); nor has a function's call (the functions plan their own statements at every call, tested above). The key
    // lookups are the documented exceptions (key-admission.ts): planned at every call they would cost every
    // request about 100 µs of a backend's CPU.
    const named = [...preparedStatements().entries()];
    const perCall = /\b(AND|WHERE) esig_planned_per_call\(\$\d+::integer\)/;
    const insert = /^\s*INSERT INTO \w+ \([\w, ]+\)\s+(VALUES \([^()]*\)|SELECT \* FROM unnest\([^()]*\))(\s+ON CONFLICT( \([\w, ]+\))? DO (NOTHING|UPDATE SET .*))?$/s;
    const functionCall = /^\s*SELECT (\*|[\w, ]+) FROM esig_\w+\([^()]*\)$|^\s*SELECT esig_\w+\([^()]*\) AS \w+$/;
    const choosing = named.filter(([, text]) => !perCall.test(text) && !insert.test(text) && !functionCall.test(text));
    expect(choosing.map(([name]) => name).sort()).toEqual(['esig_api_keys_by_secret_hash', 'esig_key_admission_many']);
  });
});
