import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

describe('@esig/embed IIFE build', () => {
  it('builds with esbuild, exposes EsigEmbed, and stays under 5 KB gzipped', () => {
    execFileSync(process.execPath, [join(root, 'scripts', 'build-iife.mjs')], { stdio: 'inherit' });
    const bytes = readFileSync(join(root, 'dist', 'esig-embed.iife.js'));
    const gzipped = gzipSync(bytes, { level: 9 }).length;
    console.log(`@esig/embed IIFE: ${bytes.length} bytes, ${gzipped} bytes gzipped`);
    expect(bytes.toString('utf8')).toMatch(/^("use strict";)?var EsigEmbed=/);
    expect(gzipped).toBeLessThan(5 * 1024);
  });
});
