#!/usr/bin/env node
// Prints the size of the IIFE build, raw and gzipped (the figure docs/embedding.md quotes).
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const file = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'esig-embed.iife.js');
const bytes = readFileSync(file);
console.log(`@esig/embed IIFE: ${bytes.length} bytes, ${gzipSync(bytes, { level: 9 }).length} bytes gzipped`);
