import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as E from 'fp-ts/lib/Either.js';
import { afterAll, describe, expect, it } from 'vitest';
import { listEvents } from '@esig/core';
import { nodeCrypto } from '@esig/runtime-node';
import { openSqliteStore } from '@esig/store-sqlite';
import { runAgreement } from '../src/index.js';

const dir = mkdtempSync(join(tmpdir(), 'esig-embedded-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const pdftotext = (bytes: Uint8Array) => {
  const file = join(dir, `${Math.random()}.pdf`);
  writeFileSync(file, bytes);
  return execFileSync('pdftotext', ['-layout', file, '-'], { encoding: 'utf8' });
};

describe('the embedded-core example', () => {
  it('takes an agreement through the core alone from upload to the sealed PDF: two signers, jobs run on demand', async () => {
    const path = join(dir, 'embedded.db');
    const result = await runAgreement(path);
    expect(result.status).toBe('COMPLETED');
    expect(pdftotext(result.finished)).toMatch(/Cleo Client[\s\S]*Ada Lovelace|Ada Lovelace[\s\S]*Cleo Client/);
    expect(pdftotext(result.certificate)).toContain(result.requestId);

    const db = openSqliteStore({ path });
    const cursors = { sign: (d: string) => nodeCrypto.hmacSha256Hex('k', d), verify: (d: string, m: string) => nodeCrypto.hmacSha256Hex('k', d) === m };
    const events = await listEvents({ stores: db.stores, cursors })(
      { tenant: { orgId: 'org_acme', mode: 'test' }, scopes: ['*'], credential: { kind: 'external', id: 'x' } },
      { order: 'asc', limit: 100 },
      {},
      (e) => e.type,
    )();
    db.close();
    expect(E.isRight(events) && events.right.data).toEqual([
      'document.created',
      'request.sent',
      'signer.notified',
      'signer.notified',
      'signer.opened',
      'request.viewed',
      'signer.signed',
      'signer.opened',
      'request.viewed',
      'signer.signed',
      'request.completed',
    ]);
  }, 60_000);

  it('runs as a script, as its header shows, writing the finished PDF and the certificate', () => {
    const out = join(dir, 'out');
    const r = spawnSync(process.execPath, ['--conditions=@esig/source', '--import', 'tsx', new URL('../src/index.ts', import.meta.url).pathname, join(dir, 'script.db'), out], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^req_[0-9A-Z]{26}: COMPLETED; wrote /);
    for (const f of ['finished.pdf', 'certificate.pdf']) expect(existsSync(join(out, f)) && readFileSync(join(out, f)).subarray(0, 5).toString()).toBe('%PDF-');
  }, 60_000);
});
