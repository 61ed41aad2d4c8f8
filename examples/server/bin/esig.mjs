#!/usr/bin/env node
// The reference server runs its TypeScript sources directly through tsx, so `npm ci` is the whole
// install: no build step can go stale between a checkout and `npx esig serve`.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli.ts');
