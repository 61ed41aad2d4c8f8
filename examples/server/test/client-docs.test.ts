// docs/client.md's flow, run exactly as written (its code block saved as flow.ts and run with tsx) against a
// real server, so the guide cannot rot.
import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { TestServer } from './harness.js';
import { startTestServer } from './harness.js';

const repo = new URL('../../..', import.meta.url).pathname;
let s: TestServer;
let dir: string;
beforeAll(async () => {
  s = await startTestServer();
  // Under the repository, so that `@esig/client` resolves as it does for a script in the repository's root.
  const scratch = join(repo, 'examples/server/.vitest-tmp');
  mkdirSync(scratch, { recursive: true });
  dir = mkdtempSync(join(scratch, 'client-docs-'));
});
afterAll(async () => {
  await s?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The guide's `flow.ts` block. */
const flowScript = () => {
  const doc = readFileSync(join(repo, 'docs/client.md'), 'utf8');
  const block = [...doc.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!).find((code) => code.startsWith('// flow.ts\n'));
  if (!block) throw new Error('docs/client.md has no ```ts block starting with // flow.ts');
  return block;
};

const run = (cwd: string, env: Record<string, string>) =>
  new Promise<{ code: number | null; out: string }>((resolve) => {
    // The TypeScript loader the guide names (tsx), resolving @esig/client to its sources as the tests do.
    const child = spawn(process.execPath, ['--conditions=@esig/source', '--import', 'tsx', 'flow.ts'], { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('exit', (code) => resolve({ code, out }));
  });

it('runs the flow of docs/client.md as written, to a completed request with its finished PDF and certificate', async () => {
  writeFileSync(join(dir, 'flow.ts'), flowScript());
  mkdirSync(join(dir, 'docs'));
  copyFileSync(join(repo, 'docs/sample.pdf'), join(dir, 'docs/sample.pdf'));
  const { code, out } = await run(dir, { ESIG_API_KEY: s.key, ESIG_URL: s.url });
  expect(code, out).toBe(0);
  expect(out).toMatch(/^uploaded doc_\w{26}: 2 pages, UPLOADED$/m);
  expect(out).toMatch(/^req_\w{26} is SENT$/m);
  expect(out).toMatch(/^listed among the SENT requests: true$/m);
  expect(out).toMatch(/^event request\.sent$/m);
  expect(out).toMatch(/^signed: 200$/m);
  expect(out).toMatch(/^req_\w{26} is COMPLETED; certificate coc_\w{26}, \d+ steps of evidence$/m);
  for (const f of ['finished.pdf', 'certificate.pdf']) expect(readFileSync(join(dir, f)).subarray(0, 5).toString()).toBe('%PDF-');
}, 90_000);
