// Writes src/generated/api-types.ts from the server's OpenAPI document: `npm run generate -w @esig/client`.
import { writeFileSync } from 'node:fs';
import { generateApiTypes } from './api-types.js';

const target = new URL('../src/generated/api-types.ts', import.meta.url);
writeFileSync(target, generateApiTypes());
console.log(`wrote ${target.pathname}`);
