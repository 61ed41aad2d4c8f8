import { dedupeKeyBounds } from '@esig/store-sql';
import * as E from 'fp-ts/lib/Either.js';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { byIdSql } from '../src/by-id.js';
import type { Prepared } from '../src/connection.js';
import { valuesOf } from '../src/connection.js';
import { ATTACH, ATTACH_ONE, ATTACH_ONE_RAISING, ATTACH_RAISING, FIND_BY_ID, FIND_BY_IDS, FIND_ONE } from '../src/documents.js';
import { CANCEL_WAITING, CLAIM_SQL, NEXT_RUN_AT_SQL } from '../src/jobs.js';
import { FIND_BY_ID as REQUEST_BY_ID, FIND_BY_ID_FOR_UPDATE as REQUEST_BY_ID_FOR_UPDATE, UPDATE_SQL as REQUEST_UPDATE } from '../src/signature-requests.js';
import { FIND_WITH_ENDPOINT } from '../src/webhook-deliveries.js';
import { available, migratedTestClient, rowsRead } from './pg.js';

interface PlanNode {
  readonly 'Node Type': string;
  readonly 'Index Name'?: string;
  readonly 'Relation Name'?: string;
  readonly 'Actual Rows'?: number;
  readonly 'Actual Loops'?: number;
  readonly 'Rows Removed by Filter'?: number;
  readonly Plans?: readonly PlanNode[];
}

const nodes = (p: PlanNode): PlanNode[] => [p, ...(p.Plans ?? []).flatMap(nodes)];

/**
 * A migrated database for the enclosing `describe`, handed to `use` before its tests run, in which nothing
 * refreshes the statistics of `tables` whatever the server's autovacuum setting: they stay as growth without
 * ANALYZE leaves them.
 */
const withTablesNeverAnalyzed = (tables: readonly string[], use: (client: pg.PoolClient) => void) => {
  let close: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    const db = await migratedTestClient();
    close = db.close;
    await db.client.query(tables.map((t) => `ALTER TABLE ${t} SET (autovacuum_enabled = false)`).join('; '));
    use(db.client);
  });
  afterAll(async () => {
    await close?.();
  });
};

/** The plan PostgreSQL would run `sql` with, for these parameters (and a statement's own, see `valuesOf`). */
const explain = async (client: pg.PoolClient, sql: string | Prepared, params: readonly unknown[]): Promise<PlanNode> => {
  const text = typeof sql === 'string' ? sql : sql.text;
  const r = await client.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(`EXPLAIN (FORMAT JSON) ${text}`, valuesOf(sql, params));
  return r.rows[0]!['QUERY PLAN'][0]!.Plan;
};

/** Runs a store's statement as plain text, with its own parameters after these. */
const runText = (client: pg.PoolClient, stmt: Prepared, params: readonly unknown[]) => client.query<{ id: string }>(stmt.text, valuesOf(stmt, params));

/** Documents of one org, as uploads leave them: inserted in batches, never analyzed. */
const grow = (from: number, to: number) => `
  INSERT INTO documents (id, org_id, mode, name, status, page_count, size_bytes, sha256, signature_request_id, created_at)
    SELECT 'doc_' || lpad(i::text, 26, '0'), CASE WHEN i % 50 = 0 THEN 'org_other' ELSE 'org_big' END, 'test', 'd.pdf', 'UPLOADED', 1, 100,
           repeat('a', 64), CASE WHEN i % 3 = 0 THEN 'req_' || i END, timestamptz '2026-01-01' + i * interval '1 second'
    FROM generate_series(${from + 1}, ${to}) AS i;
  INSERT INTO signature_requests (id, org_id, mode, status, created_at, version, data)
    SELECT 'req_' || lpad(i::text, 26, '0'), CASE WHEN i % 50 = 0 THEN 'org_other' ELSE 'org_big' END, 'test', 'DRAFT',
           timestamptz '2026-01-01' + i * interval '1 second', 1, '{}'
    FROM generate_series(${from + 1}, ${to}) AS i`;

/**
 * The create-request statements on a documents table grown without ANALYZE. With no statistics the planner
 * takes `org_id = … AND mode = …` for a row or two, so a statement that names the tenant beside the ids may
 * read the whole tenant's range of an (org_id, mode, …) index and filter it by id: one org's every document
 * per request. The statements must reach the listed documents by primary key at every size.
 */
describe.skipIf(!available)('create-request statements on a table grown without ANALYZE', () => {
  let client!: pg.PoolClient;
  withTablesNeverAnalyzed(['documents', 'signature_requests'], (c) => (client = c));

  /** How each statement reads `table`: node type and index, for every node that reads the table. */
  const reads = (plan: PlanNode, table = 'documents') =>
    nodes(plan)
      .filter((n) => n['Node Type'] !== 'ModifyTable' && (n['Relation Name'] === table || n['Index Name']?.startsWith(table) === true))
      .map((n) => `${n['Node Type']} ${n['Index Name'] ?? ''}`.trim());

  it('finds and attaches the listed documents, and finds a request or a document by id, through the primary key at 1 k, 10 k and 40 k rows', async () => {
    let rows = 0;
    for (const size of [1_000, 10_000, 40_000]) {
      // In batches, as uploads arrive.
      for (; rows < size; rows += 1_000) await client.query(grow(rows, rows + 1_000));
      const never = await client.query<{ n: string }>("SELECT (SELECT count(*) FROM pg_stat_user_tables WHERE relname = 'documents' AND last_analyze IS NULL AND last_autoanalyze IS NULL) AS n");
      expect(never.rows[0]!.n, 'the table must never have been analyzed').toBe('1');

      const id = `doc_${String(size - 1).padStart(26, '0')}`;
      for (const [name, sql, params] of [
        ['findByIds', FIND_BY_IDS, ['org_big', 'test', [id]]],
        ['findByIds, several', FIND_BY_IDS, ['org_big', 'test', [id, `doc_${String(size - 2).padStart(26, '0')}`]]],
        ['attachToRequest', ATTACH, ['org_big', 'test', [id], 'req_new', 1, 500]],
        // The form a command sends without waiting for its answer, which raises when it links too few.
        ['attachToRequest, sent unanswered', ATTACH_RAISING, ['org_big', 'test', [id], 'req_new', 1, 500]],
        // One document, as the store sends it (statements that keep a generic plan).
        ['findByIds, one', FIND_ONE, ['org_big', 'test', id]],
        ['attachToRequest, one', ATTACH_ONE, ['org_big', 'test', id, 'req_new', 500]],
        ['attachToRequest, one, sent unanswered', ATTACH_ONE_RAISING, ['org_big', 'test', id, 'req_new', 500]],
      ] as const) {
        const used = reads(await explain(client, sql, params));
        const where = `${name} at ${size} rows: ${JSON.stringify(used)}`;
        expect(used.length, where).toBeGreaterThan(0);
        // Every read of the table is a lookup in its primary key: no sequential scan, no tenant range.
        for (const r of used) expect(['Index Scan documents_pkey', 'Bitmap Index Scan documents_pkey', 'Bitmap Heap Scan', 'LockRows'], where).toContain(r);
        expect(used, where).toContain(used.some((r) => r.startsWith('Bitmap Index')) ? 'Bitmap Index Scan documents_pkey' : 'Index Scan documents_pkey');
      }

      // Every later step of a request's life finds it (and its documents) by id, the same way.
      for (const [table, sql, key] of [
        // The stores' own (only the primary key can serve them: migrations 0015 and 0017).
        ['documents', FIND_BY_ID, id],
        ['signature_requests', REQUEST_BY_ID, `req_${String(size - 1).padStart(26, '0')}`],
        ['signature_requests', REQUEST_BY_ID_FOR_UPDATE, `req_${String(size - 1).padStart(26, '0')}`],
      ] as const) {
        const used = reads(await explain(client, sql, [key, 'org_big', 'test']), table);
        const where = `${table} by id at ${size} rows: ${JSON.stringify(used)}`;
        expect(used.length, where).toBeGreaterThan(0);
        for (const r of used) expect([`Index Scan ${table}_pkey`, 'LockRows'], where).toContain(r);
      }
      // And a request's change, with its version and created_at (compared with \`=\`, the tenant walked its range of a
      // page index).
      const n = size - 1;
      const change = reads(
        await explain(client, REQUEST_UPDATE, [
          'SENT',
          2,
          '{}',
          `req_${String(n).padStart(26, '0')}`,
          'org_big',
          'test',
          new Date(Date.parse('2026-01-01T00:00:00Z') + n * 1000).toISOString(),
        ]),
        'signature_requests',
      );
      expect(change, `a request's change at ${size} rows`).toEqual(['Index Scan signature_requests_pkey']);
    }
  });

  /*
   * PostgreSQL mostly plans these statements afresh at every call: a generic plan for `id = ANY($3)` assumes ten
   * ids, so it looks dearer than a plan for the one or two most requests list. Planning grows with the scans a
   * statement makes of this four-index table; three scans cost a backend 250 µs per create-request (measured
   * with pg_stat_statements' planning time), so each statement on a create-request's path scans it once.
   */
  it('reads the documents table once per statement on the create-request path (most calls plan it afresh)', async () => {
    const id = `doc_${String(40_000 - 1).padStart(26, '0')}`;
    for (const [name, sql, params, scans] of [
      ['findByIds', FIND_BY_IDS, ['org_big', 'test', [id]], 1],
      ['attachToRequest, sent unanswered', ATTACH_RAISING, ['org_big', 'test', [id], 'req_new', 1, 500], 1],
      // Answered, it must change nothing when it cannot change all: it locks and counts first, then writes.
      ['attachToRequest', ATTACH, ['org_big', 'test', [id], 'req_new', 1, 500], 2],
      ['findByIds, one', FIND_ONE, ['org_big', 'test', id], 1],
      ['attachToRequest, one', ATTACH_ONE, ['org_big', 'test', id, 'req_new', 500], 1],
      ['attachToRequest, one, sent unanswered', ATTACH_ONE_RAISING, ['org_big', 'test', id, 'req_new', 500], 1],
    ] as const) {
      const plan = await explain(client, sql, params);
      const scansOfTable = nodes(plan).filter((n) => n['Relation Name'] === 'documents' && n['Node Type'] !== 'ModifyTable');
      expect(scansOfTable.map((n) => `${n['Node Type']} ${n['Index Name'] ?? ''}`.trim()), name).toHaveLength(scans);
    }
  });

  it('the plain statement (tenant and ids side by side) is what flips, shown for the record', async () => {
    const r = await client.query<{ 'QUERY PLAN': string }>(
      'EXPLAIN SELECT * FROM documents WHERE org_id = $1 AND mode = $2 AND id = ANY($3::text[])',
      ['org_big', 'test', [`doc_${'1'.padStart(26, '0')}`]],
    );
    // Not asserted: which wrong index the planner picks is its call; the statements above no longer offer it one.
    console.log(r.rows.map((x) => x['QUERY PLAN']).join('\n'));
    const id = `doc_${'1'.padStart(26, '0')}`;
    const found = await runText(client, FIND_BY_IDS, ['org_big', 'test', [id]]);
    expect(found.rows.map((x: { id: string }) => x.id)).toEqual([id]);
    // Another tenant's document is not found by listing its id.
    const foreign = `doc_${'50'.padStart(26, '0')}`;
    expect((await runText(client, FIND_BY_IDS, ['org_big', 'test', [foreign]])).rowCount).toBe(0);
    expect((await runText(client, FIND_BY_IDS, ['org_other', 'live', [foreign]])).rowCount).toBe(0);
    expect((await runText(client, FIND_BY_IDS, ['org_other', 'test', [foreign]])).rowCount).toBe(1);
    for (const [sql, key] of [
      [byIdSql('documents', 'id'), foreign],
      [FIND_BY_ID, foreign],
      [REQUEST_BY_ID, `req_${'50'.padStart(26, '0')}`],
      [REQUEST_BY_ID_FOR_UPDATE, `req_${'50'.padStart(26, '0')}`],
    ] as const) {
      const text = typeof sql === 'string' ? sql : sql.text;
      const values = (tenant: readonly string[]) => (typeof sql === 'string' ? [key, ...tenant] : valuesOf(sql, [key, ...tenant]));
      expect((await client.query(text, values(['org_big', 'test']))).rowCount).toBe(0);
      expect((await client.query(text, values(['org_other', 'live']))).rowCount).toBe(0);
      expect((await client.query(text, values(['org_other', 'test']))).rowCount).toBe(1);
    }
  });
});

/**
 * A worker's claim and its next due time, on a queue grown without ANALYZE: a backlog of due webhook
 * deliveries, a few of them leased, and the mail worker asking for its own kinds (none due). Each worker serves
 * some kinds only; the statements must read the asked kinds' jobs and the leased ones, never the backlog of
 * the others, at any size.
 */
describe.skipIf(!available)("a worker's claim on a queue grown without ANALYZE", () => {
  let client!: pg.PoolClient;
  withTablesNeverAnalyzed(['jobs'], (c) => (client = c));

  /** Due deliveries, every 100th leased by a running worker, and every 500th a mail job due tomorrow. */
  const backlog = (from: number, to: number) => `
    INSERT INTO jobs (id, kind, org_id, mode, payload, run_at, attempts, dedupe_key, created_at, locked_by, locked_until)
      SELECT 'job_' || lpad(i::text, 26, '0'), CASE WHEN i % 500 = 0 THEN 'mail.invite' ELSE 'webhook.deliver' END, 'org_1', 'test', '{}',
             timestamptz '2026-01-01' + i * interval '1 millisecond' + CASE WHEN i % 500 = 0 THEN interval '1 day' ELSE interval '0' END,
             0, NULL, timestamptz '2026-01-01', CASE WHEN i % 100 = 0 THEN 'worker-2' END,
             CASE WHEN i % 100 = 0 THEN timestamptz '2026-01-01 00:10' END
      FROM generate_series(${from + 1}, ${to}) AS i`;

  const jobRowsRead = (sql: string, params: readonly unknown[]) => rowsRead(client, 'jobs', sql, params);

  it('reads a few rows whether the backlog holds 1 k, 10 k or 40 k jobs, and answers as before', async () => {
    const mail = ['mail.invite', 'mail.remind', 'seal', 'expire'];
    const now = '2026-01-01T00:05:00.000Z';
    let rows = 0;
    for (const size of [1_000, 10_000, 40_000]) {
      for (; rows < size; rows += 1_000) await client.query(backlog(rows, rows + 1_000));
      const never = await client.query<{ n: string }>("SELECT count(*) AS n FROM pg_stat_user_tables WHERE relname = 'jobs' AND last_analyze IS NULL AND last_autoanalyze IS NULL");
      expect(never.rows[0]!.n, 'the table must never have been analyzed').toBe('1');
      const where = (what: string) => `${what} at ${size} jobs`;
      // Nothing of the mail worker's kinds is due: the claim reads their (empty) ranges only.
      expect(await jobRowsRead(CLAIM_SQL, [mail, now, 'worker-1', '2026-01-01T00:06:00.000Z', 4]), where('mail claim')).toBeLessThanOrEqual(4);
      // The delivery worker takes its 16 oldest, stepping over the leased ones among them.
      expect(await jobRowsRead(CLAIM_SQL, [['webhook.deliver', 'webhook.dispatch'], now, 'worker-1', '2026-01-01T00:06:00.000Z', 16]), where('delivery claim')).toBeLessThanOrEqual(40);
      // The next due time: the first unleased job of each kind, and the leased jobs (a hundredth of the backlog here).
      expect(await jobRowsRead(NEXT_RUN_AT_SQL, [mail]), where('mail next due')).toBeLessThanOrEqual(size / 100 + 10);
      expect(await jobRowsRead(NEXT_RUN_AT_SQL, [['webhook.deliver']]), where('delivery next due')).toBeLessThanOrEqual(size / 100 + 10);

      const next = await client.query<{ next: string | Date }>(NEXT_RUN_AT_SQL, [mail]);
      expect(new Date(next.rows[0]!.next).toISOString(), where('mail next due')).toBe('2026-01-02T00:00:00.500Z');
      const claimed = await client.query<{ id: string }>(CLAIM_SQL, [['webhook.deliver'], now, 'worker-1', '2026-01-01T00:06:00.000Z', 3]);
      // The oldest three not leased (job 100, 200, … are), each claimed once across the sizes.
      expect(claimed.rows.map((r) => r.id).sort(), where('delivery claim')).toHaveLength(3);
      await client.query("DELETE FROM jobs WHERE locked_by = 'worker-1'");
    }
  });

  it("cancels a request's waiting jobs through the dedupe key's index at 1 k, 10 k and 40 k scheduled jobs", async () => {
    // Sent requests' automatic reminders, as `send` leaves them: one waiting job each, keyed by its request.
    const key = (i: number | string) => `remind.auto:req_${String(i).padStart(26, '0')}:`;
    const scheduled = (from: number, to: number) => `
      INSERT INTO jobs (id, kind, org_id, mode, payload, run_at, attempts, dedupe_key, created_at)
        SELECT 'job_r' || lpad(i::text, 25, '0'), 'remind.auto', 'org_1', 'test', '{}', timestamptz '2026-01-03', 0,
               'remind.auto:req_' || lpad(i::text, 26, '0') || ':1', timestamptz '2026-01-01'
        FROM generate_series(${from + 1}, ${to}) AS i`;
    let rows = 0;
    for (const size of [1_000, 10_000, 40_000]) {
      for (; rows < size; rows += 1_000) await client.query(scheduled(rows, rows + 1_000));
      const never = await client.query<{ n: string }>("SELECT count(*) AS n FROM pg_stat_user_tables WHERE relname = 'jobs' AND last_analyze IS NULL AND last_autoanalyze IS NULL");
      expect(never.rows[0]!.n, 'the table must never have been analyzed').toBe('1');
      const range = (prefix: string) => {
        const bounds = dedupeKeyBounds({ prefix });
        if (E.isLeft(bounds) || 'key' in bounds.right) throw new Error(`no range for ${prefix}`);
        return [bounds.right.from, bounds.right.to, 'org_1', 'test'];
      };
      expect(await jobRowsRead(CANCEL_WAITING, range(key(size / 2))), `at ${size} jobs`).toBeLessThanOrEqual(2);
      const deleted = await client.query(CANCEL_WAITING, range(key(size - 1)));
      expect(deleted.rowCount, `at ${size} jobs`).toBe(1);
    }
  });
});

/** Deliveries of one org, as events leave them, with their endpoints: inserted in batches, never analyzed. */
const growDeliveries = (from: number, to: number) => `
  INSERT INTO webhook_endpoints (id, org_id, mode, url, events, description, enabled, disabled_reason, disabled_at, secrets,
                                 consecutive_final_failures, failing_since, created_at, updated_at, version)
    SELECT 'whe_' || lpad(i::text, 26, '0'), 'org_big', 'test', 'https://h.example/' || i, '["request.sent"]', NULL, true, NULL, NULL,
           '[]', 0, NULL, timestamptz '2026-01-01' + i * interval '1 second', timestamptz '2026-01-01', 1
    FROM generate_series(${from + 1}, ${to}) AS i WHERE i % 100 = 0;
  INSERT INTO webhook_deliveries (id, org_id, mode, endpoint_id, event_id, event_type, body, status, attempts, created_at, version)
    SELECT 'dlv_' || lpad(i::text, 26, '0'), CASE WHEN i % 50 = 0 THEN 'org_other' ELSE 'org_big' END, 'test',
           'whe_' || lpad(((i / 100) * 100 + 100)::text, 26, '0'), 'evt_' || i, 'request.sent', '{}', 'succeeded', 1,
           timestamptz '2026-01-01' + i * interval '1 second', 1
    FROM generate_series(${from + 1}, ${to}) AS i`;

describe.skipIf(!available)("a worker's delivery lookups on tables grown without ANALYZE", () => {
  let client!: pg.PoolClient;
  withTablesNeverAnalyzed(['webhook_deliveries', 'webhook_endpoints'], (c) => (client = c));

  it('finds the deliveries looked up together, and their endpoints, through the primary keys at 1 k, 10 k and 40 k rows', async () => {
    let rows = 0;
    for (const size of [1_000, 10_000, 40_000]) {
      for (; rows < size; rows += 1_000) await client.query(growDeliveries(rows, rows + 1_000));
      const ids = Array.from({ length: 16 }, (_, i) => `dlv_${String(size - 1 - i * 7).padStart(26, '0')}`);
      const all = nodes(await explain(client, FIND_WITH_ENDPOINT, [ids, ids.map(() => 'org_big'), ids.map(() => 'test')]));
      const tables = all.filter((n) => n['Relation Name'] !== undefined).map((n) => `${n['Node Type']} ${n['Index Name'] ?? n['Relation Name']}`);
      const where = `at ${size} rows: ${JSON.stringify(all.map((n) => n['Node Type']))}`;
      expect(tables.sort(), where).toEqual(['Index Scan webhook_deliveries_pkey', 'Index Scan webhook_endpoints_pkey']);
    }
  });
});
