import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { makePdf } from '@esig/testkit/pdf';
import { UsageError, runJobsCommand } from '../src/jobs-command.js';
import { BIN, startEsig } from './spawn.js';

/**
 * Every wait in these tests is for a condition; the one time bound is each test's timeout, a hang guard far
 * above any slow run (a shared 2-core machine under load can take minutes), so slowness is never a failure.
 */
const TEST_MS = 10 * 60_000;
const dir = mkdtempSync(join(tmpdir(), 'esig-jobs-cli-'));
const dbFile = join(dir, 'esig.db');
const env = {
  ...process.env,
  ESIG_DATABASE_URL: `sqlite:${dbFile}`,
  ESIG_PORT: '0',
  ESIG_HOST: '127.0.0.1',
  ESIG_LOG_LEVEL: 'info',
  ESIG_WORKERS: 'none',
  ESIG_WORKER_POLL_MS: '20',
  ESIG_PUBLIC_URL: 'http://esig.test',
};
const children: ChildProcess[] = [];
let finished = false;
afterAll(() => {
  finished = true;
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

/** Runs `esig <args>` to its end (without blocking this process, so the servers it talks to keep running). */
const esig = (...args: string[]) =>
  new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });

/** Polls until `probe` answers; bounded only by the test's timeout. */
const until = async <T>(probe: () => Promise<T | undefined> | T | undefined, what: string): Promise<T> => {
  for (;;) {
    if (finished) throw new Error(`gave up waiting for ${what}`);
    const v = await probe();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 25));
  }
};

const logLines = (out: string): Array<Record<string, unknown>> =>
  out
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe('esig jobs: a seal that keeps failing is seen and finished after the cause is fixed', () => {
  it('logs the failure with the request, lists the buried job, and retries it to a finished PDF', async () => {
    const api = await startEsig(['serve'], env, /esig: listening on http:\/\/[^:]+:(\d+)/, children);
    const url = `http://127.0.0.1:${api.match[1]}`;
    const key = /(esig_test_[A-Za-z0-9]{32})/.exec(api.out())![1]!;
    const call = async (method: string, path: string, body?: unknown, raw?: Uint8Array) => {
      const res = await fetch(`${url}${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, 'content-type': raw ? 'application/pdf' : 'application/json' },
        body: raw ?? (body === undefined ? undefined : JSON.stringify(body)),
      });
      return { status: res.status, body: ((res.headers.get('content-type') ?? '').includes('json') ? await res.json() : null) as any };
    };

    const doc = (await call('POST', '/api/v1/documents?name=lease.pdf', undefined, await makePdf(1))).body;
    const req = (await call('POST', '/api/v1/signature-requests', { title: 'Stuck seal', documentIds: [doc.id] })).body;
    const rcp = (await call('POST', `/api/v1/signature-requests/${req.id}/recipients`, { email: 'stuck@example.com', firstName: 'S', lastName: 'T' })).body;
    await call('POST', `/api/v1/signature-requests/${req.id}/fields`, { documentId: doc.id, recipientId: rcp.id, type: 'signature', page: 1, x: 72, y: 600, width: 200, height: 50 });
    expect((await call('POST', `/api/v1/signature-requests/${req.id}/send`)).status).toBe(200);

    // A worker sends the invitation, then stops, so the seal runs only once the document's content is gone.
    let worker = await startEsig(['worker'], env, /esig: worker started/, children);
    const invitation = await until(async () => (await call('GET', '/api/v1/test-mailbox?limit=10')).body.data.find((m: any) => /Please sign/.test(m.subject)), 'the invitation');
    worker.child.kill('SIGTERM');
    await new Promise((r) => worker.child.once('exit', r));
    const token = /sign\/([A-Za-z0-9]{43,})/.exec(invitation.text)![1]!;
    const signed = await fetch(`${url}/api/v1/signing/${token}/sign`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ values: {}, signature: { kind: 'typed', value: 'S T' } }) });
    expect(signed.status).toBe(200);

    // The stored upload is lost (a storage fault): sealing cannot succeed, and gives up at once.
    const db = new Database(dbFile);
    const content = db.prepare('SELECT * FROM document_contents WHERE document_id = ?').get(doc.id) as Record<string, unknown>;
    db.prepare('DELETE FROM document_contents WHERE document_id = ?').run(doc.id);
    worker = await startEsig(['worker'], env, /esig: worker started/, children);
    const buried = await until(() => logLines(worker.out()).find((l) => l.msg === 'job buried'), 'the seal to be buried');
    // The reason is logged, naming the request and how to retry.
    expect(buried).toMatchObject({ level: 'error', kind: 'seal.complete', request: req.id, buried: true, permanent: true, error: `content of ${doc.id} is missing` });
    const jobId = String(buried.job);
    expect(buried.retryWith).toBe(`esig jobs retry ${jobId}`);
    // Not COMPLETED without its PDFs: the request stays SENT, every signer SIGNED, until the seal succeeds.
    expect((await call('GET', `/api/v1/signature-requests/${req.id}`)).body).toMatchObject({ status: 'SENT', certificateId: null });
    expect((await call('GET', `/api/v1/signature-requests/${req.id}/document`)).status).toBe(409);

    // The operator sees it.
    const table = await esig('jobs', 'list', '--failed');
    expect(table.status, table.stderr).toBe(0);
    const [header, ...rows] = table.stdout.trim().split('\n');
    expect(header).toMatch(/^ID\s+KIND\s+REQUEST\s+STATE\s+ATTEMPTS\s+NEXT RUN\s+LAST ERROR$/);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.split(/\s{2,}/)).toEqual([jobId, 'seal.complete', req.id, 'buried', '1', 'never (buried)', `content of ${doc.id} is missing`]);
    const json = await esig('jobs', 'list', '--kind', 'seal.complete', '--request', req.id, '--json');
    expect(json.status, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual([
      expect.objectContaining({ id: jobId, kind: 'seal.complete', requestId: req.id, state: 'buried', attempts: 1, nextRunAt: null, buried: true, lease: null, lastError: `content of ${doc.id} is missing` }),
    ]);
    expect(JSON.parse((await esig('jobs', 'list', '--kind', 'mail.completed', '--json')).stdout)).toEqual([]);
    expect((await esig('jobs', 'list', '--request', 'req_other')).stdout.trim()).toBe('No jobs match.');

    // The content is restored from a backup; the operator retries the request's failed jobs, and it finishes.
    // The whole row: its bytes are in `content_pieces` (staged ahead of the upload's transaction), which it names.
    db.prepare('INSERT INTO document_contents (org_id, mode, document_id, bytes, staged_id) VALUES (@org_id, @mode, @document_id, @bytes, @staged_id)').run(content);
    db.close();
    const retried = await esig('jobs', 'retry', '--request', req.id);
    expect(retried.status, retried.stderr).toBe(0);
    expect(retried.stdout.trim()).toBe(`${jobId} (seal.complete, request ${req.id}): due now, attempts reset (last error: content of ${doc.id} is missing)`);
    await until(async () => ((await call('GET', `/api/v1/signature-requests/${req.id}/document`)).status === 200 ? true : undefined), 'the finished PDF');
    // The worker logs after its commit, and its output reaches this process through a pipe: wait for the line.
    await until(() => (logLines(worker.out()).some((l) => l.job === jobId && l.msg === 'job done') ? true : undefined), "the worker's 'job done'");
    expect(logLines(worker.out()).filter((l) => l.job === jobId).map((l) => l.msg)).toEqual(['job buried', 'job done']);
    expect((await call('GET', '/api/v1/events?type=request.completed')).body.data).toHaveLength(1);

    // Nothing is left to retry; a finished job is gone.
    await until(async () => ((await esig('jobs', 'list', '--failed')).stdout.trim() === 'No jobs match.' ? true : undefined), 'no failed jobs');
    const gone = await esig('jobs', 'retry', jobId);
    expect(gone.status).toBe(1);
    expect(gone.stdout.trim()).toBe(`${jobId}: not changed, no such job (finished jobs are removed)`);
    const none = await esig('jobs', 'retry', '--request', req.id);
    expect(none.status).toBe(1);
    expect(none.stderr).toMatch(`request ${req.id} has no failed jobs; nothing to retry`);
    worker.child.kill('SIGTERM');
    api.child.kill('SIGTERM');
  }, TEST_MS);

  it('refuses bad arguments with a message, the usage and exit code 2', async () => {
    // The argument checks, in this process: none of them gets as far as opening the database.
    const untouched = async (): Promise<never> => {
      throw new Error('opened the database for a bad command');
    };
    const io = { out: () => undefined, err: () => undefined };
    for (const [sub, args, message] of [
      ['list', ['--kind', 'seal,nope'], /^unknown job kind\(s\): nope \(kinds: mail\.invite, .*seal/],
      ['list', ['--kind', 'seal', '--kind', 'bogus'], /^unknown job kind\(s\): bogus/],
      ['list', ['--limit', '0'], /^--limit must be a whole number from 1 to 1000$/],
      ['list', ['--limit', '1001'], /^--limit must be a whole number from 1 to 1000$/],
      ['list', ['--limit', '2.5'], /^--limit must be a whole number from 1 to 1000$/],
      ['list', ['--bogus'], /Unknown option '--bogus'/],
      ['list', ['stray'], /Unexpected argument 'stray'/],
      ['retry', [], /^name the jobs to retry/],
      ['retry', ['--request', ' '], /^--request needs a signature request id/],
      ['frobnicate', [], /^unknown command "jobs frobnicate"$/],
      [undefined, [], /^unknown command "jobs "$/],
    ] as const) {
      const refused = await runJobsCommand(sub, args, untouched, io).then(
        () => null,
        (e: unknown) => e,
      );
      expect(refused, `${sub} ${args.join(' ')}`).toBeInstanceOf(UsageError);
      expect((refused as UsageError).message).toMatch(message);
    }
    // Through the binary: the message, the usage, exit code 2, no stack trace.
    const r = await esig('jobs', 'list', '--kind', 'nope');
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/^esig: unknown job kind\(s\): nope/);
    expect(r.stderr).toMatch(/Usage:/);
    expect(r.stderr).not.toMatch(/ at /);
    const help = await esig('jobs', 'list', '--help');
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/esig jobs retry <job_id>… \| --request <req_id>/);
  }, TEST_MS);
});
