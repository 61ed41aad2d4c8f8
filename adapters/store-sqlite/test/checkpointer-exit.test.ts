import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// checkpointer.ts says "Never what keeps a process alive: a store left open must not stop a CLI from exiting."
// A child process opens a store with the default (background) checkpointer, never closes it, and has nothing
// else to do: it must exit by itself. The 50 s bound only limits how long a broken child is waited for
// (starting one compiles the store from its TypeScript sources, slow on a loaded machine).
const here = path.dirname(fileURLToPath(import.meta.url));
const index = path.resolve(here, '../src/index.ts');

const exitsByItself = (checkpoint: 'background' | 'inline') =>
  new Promise<'exited' | 'still running'>((resolve) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'esig-exit-'));
    const script = path.join(dir, 'child.ts');
    fs.writeFileSync(
      script,
      `import { openSqliteStore } from ${JSON.stringify(index)};\n` +
        `openSqliteStore({ path: ${JSON.stringify(path.join(dir, 'esig.db'))}, checkpoint: ${JSON.stringify(checkpoint)} });\n` +
        `console.log('opened');\n`,
    );
    const child = spawn(process.execPath, ['--import', 'tsx', '--conditions=@esig/source', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let opened = false;
    child.stdout.on('data', (b: Buffer) => (opened ||= b.toString().includes('opened')));
    const guard = setTimeout(() => {
      child.kill('SIGKILL');
      resolve('still running');
    }, 50_000);
    child.on('exit', () => {
      clearTimeout(guard);
      fs.rmSync(dir, { recursive: true, force: true });
      resolve(opened ? 'exited' : 'still running');
    });
  });

describe('the background checkpointer', () => {
  it('does not keep a process alive when a store is left open (inline, for reference)', async () => {
    expect(await exitsByItself('inline')).toBe('exited');
  }, 60_000);

  it('does not keep a process alive when a store is left open (background)', async () => {
    expect(await exitsByItself('background')).toBe('exited');
  }, 60_000);
});
