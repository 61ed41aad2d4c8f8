import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';

export const BIN = new URL('../bin/esig.mjs', import.meta.url).pathname;

export interface StartedEsig {
  readonly child: ChildProcess;
  /** Everything it printed so far, stdout and stderr interleaved. */
  readonly out: () => string;
  readonly match: RegExpExecArray;
}

/**
 * Starts `esig <args>` and resolves once its output matches `ready`. It fails when the process exits first,
 * with what it printed; it does not fail for being slow (a loaded machine can take many seconds to start
 * four processes at once), the test's own timeout bounds a process that hangs.
 */
export const startEsig = (args: readonly string[], env: NodeJS.ProcessEnv, ready: RegExp, children: ChildProcess[] = []) =>
  new Promise<StartedEsig>((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(child);
    let out = '';
    let started = false;
    const onData = (d: Buffer) => {
      out += d.toString();
      const m = started ? null : ready.exec(out);
      if (m) {
        started = true;
        resolve({ child, out: () => out, match: m });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code, signal) => {
      if (!started) reject(new Error(`esig ${args.join(' ')} exited (${signal ?? code}) before it was ready:\n${out}`));
    });
  });
