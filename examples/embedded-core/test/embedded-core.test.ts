import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as E from 'fp-ts/lib/Either.js';
import { afterAll, describe, expect, it } from 'vitest';
import { listEvents } from '@esig/core';
import { nodeCrypto } from '@esig/runtime-node';
import { openSqliteStore } from '@esig/store-sqlite';
import { sendContract } from '../src/index.js';

const dir = mkdtempSync(join(tmpdir(), 'esig-embedded-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the embedded-core example', () => {
  it('creates and sends a request through the core alone, and the outbox holds its events', async () => {
    const path = join(dir, 'embedded.db');
    const result = await sendContract(path);
    expect(E.isRight(result)).toBe(true);
    if (E.isLeft(result)) return;
    expect(result.right).toMatchObject({ status: 'SENT', mode: 'test', orgId: 'org_acme' });

    const db = openSqliteStore({ path });
    const cursors = { sign: (d: string) => nodeCrypto.hmacSha256Hex('k', d), verify: (d: string, m: string) => nodeCrypto.hmacSha256Hex('k', d) === m };
    const events = await listEvents({ stores: db.stores, cursors })(
      { tenant: { orgId: 'org_acme', mode: 'test' }, scopes: ['*'], credential: { kind: 'external', id: 'x' } },
      { order: 'asc' },
      {},
      (e) => e.type,
    )();
    db.close();
    expect(events).toEqual(E.right(expect.objectContaining({ data: ['document.created', 'request.sent'] })));
  });

  it('runs as a script, as the README shows', () => {
    const r = spawnSync(process.execPath, ['--conditions=@esig/source', '--import', 'tsx', new URL('../src/index.ts', import.meta.url).pathname, join(dir, 'script.db')], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^sent req_[0-9A-Z]{26}: SENT, 1 recipient\(s\), 1 field\(s\)/);
  }, 30_000);
});
