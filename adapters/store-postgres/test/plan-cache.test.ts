import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { preparedStatements, queryConfig } from '../src/connection.js';
import type { Prepared } from '../src/connection.js';
import { ATTACH, ATTACH_RAISING, FIND_BY_ID as DOCUMENT_BY_ID, FIND_BY_IDS } from '../src/documents.js';
import { COMPLETE, FIND as IDEMPOTENCY_FIND } from '../src/idempotency.js';
import '../src/index.js';
import { FIND_BY_ID as REQUEST_BY_ID, FIND_BY_ID_FOR_UPDATE as REQUEST_BY_ID_FOR_UPDATE } from '../src/signature-requests.js';
import { available, migratedTestClient, rowsRead } from './pg.js';

/**
 * A statement prepared on a connection keeps the generic plan PostgreSQL made for it once, for the table's
 * size at that moment, until the table's statistics change. After an ANALYZE of a small table a sequential
 * scan is the cheaper plan even for one row by primary key, and with autovacuum off the connection would go
 * on scanning the whole table at every call while the table grows. A lookup must therefore be planned at
 * every call: its cost may not depend on the table's size, nor on when an operator last ran ANALYZE.
 */
describe.skipIf(!available)('lookups on a long-lived connection, after an ANALYZE of small tables', () => {
  const tables = ['documents', 'signature_requests', 'idempotency_keys'];
  let client!: pg.PoolClient;
  let close: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    const db = await migratedTestClient();
    client = db.client;
    close = db.close;
    await client.query(tables.map((t) => `ALTER TABLE ${t} SET (autovacuum_enabled = false)`).join('; '));
  });
  afterAll(async () => {
    await close?.();
  });

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
      SELECT 'org_big', 'test', 'key_' || i, 'f', 'in_flight', NULL, timestamptz '2026-01-01', timestamptz '2026-01-01', timestamptz '2026-01-02'
      FROM generate_series(${from + 1}, ${to}) AS i`;

  const doc = `doc_${'7'.padStart(26, '0')}`;
  const req = `req_${'7'.padStart(26, '0')}`;
  const lookups: ReadonlyArray<readonly [string, string, string | Prepared, readonly unknown[]]> = [
    ["a create-request's documents", 'documents', FIND_BY_IDS, ['org_big', 'test', [doc]]],
    ["a create-request's documents attached", 'documents', ATTACH, ['org_big', 'test', [doc], 'req_new', 1]],
    ["a create-request's documents attached, sent unanswered", 'documents', ATTACH_RAISING, ['org_big', 'test', [doc], 'req_new', 1]],
    ['a document by id', 'documents', DOCUMENT_BY_ID, [doc, 'org_big', 'test']],
    ['a request by id', 'signature_requests', REQUEST_BY_ID, [req, 'org_big', 'test']],
    ['a request by id, locked', 'signature_requests', REQUEST_BY_ID_FOR_UPDATE, [req, 'org_big', 'test']],
    ['an idempotency record', 'idempotency_keys', IDEMPOTENCY_FIND, ['org_big', 'test', 'key_7']],
    ['an idempotency record completed', 'idempotency_keys', COMPLETE.text, ['{}', 'org_big', 'test', 'key_7']],
    ['an idempotency record completed, sent unanswered', 'idempotency_keys', COMPLETE.raising, ['{}', 'org_big', 'test', 'key_7']],
  ];

  it('each reads a row or two when the tables have grown from 60 rows to 20,000 since', async () => {
    await client.query(grow(0, 60));
    await client.query(`ANALYZE ${tables.join(', ')}`);
    // The connection runs each lookup as the store does (prepared or not), often enough for PostgreSQL to
    // settle on a plan; the writes are rolled back.
    await client.query('BEGIN');
    for (const [, , stmt, params] of lookups) for (let i = 0; i < 10; i++) await client.query(queryConfig(stmt, params));
    await client.query('ROLLBACK');
    for (let rows = 60; rows < 20_000; rows += 5_000) await client.query(grow(rows, Math.min(rows + 5_000, 20_000)));

    for (const [name, table, stmt, params] of lookups) expect(await rowsRead(client, table, queryConfig(stmt, params)), name).toBeLessThanOrEqual(2);

    // Parsed once on the connection, and planned at every one of its calls: never on a generic plan.
    const plans = await client.query<{ name: string; generic_plans: string; custom_plans: string }>(
      'SELECT name, generic_plans, custom_plans FROM pg_prepared_statements WHERE NOT from_sql',
    );
    for (const [name, , stmt] of lookups) {
      const kept = plans.rows.find((r) => typeof stmt !== 'string' && r.name === stmt.name);
      expect(kept, name).toMatchObject({ generic_plans: '0', custom_plans: '11' });
    }
  });

  it('keeps a generic plan only for statements with no plan to choose, and for the two key lookups it keeps on purpose', () => {
    // An insert has no plan to choose (a conflict is found through the index it names), nor has a function's call.
    // The key lookups are the documented exceptions (key-admission.ts): planned at every call they would cost
    // every request about 100 µs of a backend's CPU.
    const named = [...preparedStatements().entries()];
    const perCall = /esig_planned_per_call\(\$\d+::integer\)/;
    const insert = /^\s*INSERT INTO \w+ \([^)]*\)\s+(VALUES \([^)]*\)|SELECT \* FROM unnest\([^)]*\))/;
    const functionCall = /^\s*SELECT (\*|[\w, ]+) FROM esig_\w+\([^)]*\)$|^\s*SELECT esig_\w+\([^)]*\) AS \w+$/;
    const choosing = named.filter(([, text]) => !perCall.test(text) && !insert.test(text) && !functionCall.test(text));
    expect(choosing.map(([name]) => name).sort()).toEqual(['esig_api_keys_by_secret_hash', 'esig_key_admission_many']);
  });
});
