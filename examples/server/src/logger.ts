import type { Logger } from '@esig/http-express';

const LEVELS = { debug: 10, info: 20, warn: 30, error: 40 } as const;

/**
 * Lines for stdout, written once per turn of the event loop. At `info` every request logs a line, and a
 * write to a pipe or a file is a synchronous system call in Node: one per line was a measurable share of a
 * request. Whatever is buffered is written before the process exits (`exit` runs on a crash too); only a
 * SIGKILL can lose the lines of the current turn.
 */
let pending = '';
let scheduled = false;
let hooked = false;
const flush = () => {
  scheduled = false;
  if (pending === '') return;
  const text = pending;
  pending = '';
  process.stdout.write(text);
};
const enqueue = (line: string) => {
  pending += line;
  if (!hooked) {
    hooked = true;
    process.once('exit', flush);
  }
  if (scheduled) return;
  scheduled = true;
  setImmediate(flush);
};

/** JSON lines on stdout (errors on stderr, at once): what log collectors expect from a container. */
export const createJsonLogger = (level: keyof typeof LEVELS): Logger => {
  const min = LEVELS[level];
  const line = (lvl: keyof typeof LEVELS) => (fields: Record<string, unknown>, msg: string) => {
    if (LEVELS[lvl] < min) return;
    const text = `${JSON.stringify({ time: new Date().toISOString(), level: lvl, msg, ...fields })}\n`;
    if (lvl !== 'error') return enqueue(text);
    // What was logged before an error comes out before it.
    flush();
    process.stderr.write(text);
  };
  return { info: line('info'), warn: line('warn'), error: line('error') };
};
