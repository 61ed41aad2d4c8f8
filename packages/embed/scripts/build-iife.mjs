#!/usr/bin/env node
// Builds dist/esig-embed.iife.js: the client as one minified script for a <script src> tag, exposing the
// global `EsigEmbed` ({ mount, defineElement }) and defining <esig-signing>. The server serves it at /embed.js.
import { build } from 'esbuild';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
await build({
  entryPoints: [join(root, 'src', 'index.ts')],
  outfile: join(root, 'dist', 'esig-embed.iife.js'),
  bundle: true,
  format: 'iife',
  globalName: 'EsigEmbed',
  minify: true,
  target: ['es2020'],
  platform: 'browser',
  legalComments: 'none',
  logLevel: 'warning',
});
