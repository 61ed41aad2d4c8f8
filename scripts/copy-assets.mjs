#!/usr/bin/env node
// After `tsc -b`: copies what the compiler does not emit (HTML, CSS, browser scripts, worker shims) from each
// built package's src/ into its dist/, at the same relative path, so compiled code finds them where the
// sources did.
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { references } = JSON.parse(readFileSync(join(root, 'tsconfig.build.json'), 'utf8'));

const walk = (dir) => readdirSync(dir).flatMap((name) => {
  const p = join(dir, name);
  return statSync(p).isDirectory() ? walk(p) : [p];
});

let copied = 0;
for (const { path } of references) {
  const pkg = join(root, dirname(path));
  const src = join(pkg, 'src');
  if (!existsSync(src)) continue;
  for (const file of walk(src)) {
    if (/\.(ts|tsx|mts|cts)$/.test(file)) continue;
    const to = join(pkg, 'dist', relative(src, file));
    mkdirSync(dirname(to), { recursive: true });
    copyFileSync(file, to);
    copied++;
  }
}
console.log(`copy-assets: ${copied} files`);
