#!/usr/bin/env node
// The esig CLI runs the compiled server (dist/, built by `npm run build`, which `npm ci` runs through the
// root `prepare` script). Started with `--conditions=@esig/source` (directly or in NODE_OPTIONS), as the
// repository's own tests and benches do, it runs the TypeScript sources through tsx instead.
const flags = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)];
const fromSources = flags.some((f, i) => f === '--conditions=@esig/source' || (f === '--conditions' && flags[i + 1] === '@esig/source') || f === '-C=@esig/source');

if (fromSources) {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli.ts');
} else {
  await import('../dist/cli.js');
}
