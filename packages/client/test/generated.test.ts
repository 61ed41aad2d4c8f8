import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { generateApiTypes, serverDocument, typeOf } from '../scripts/api-types.js';

describe('src/generated/api-types.ts', () => {
  it('is exactly what the generator makes from the server’s codecs today (run `npm run generate -w @esig/client` after a change)', () => {
    const committed = readFileSync(new URL('../src/generated/api-types.ts', import.meta.url), 'utf8');
    expect(committed).toBe(generateApiTypes());
  });

  it('names every operation an API key can call, and none of the signer API', () => {
    const text = generateApiTypes();
    const doc = serverDocument();
    const keyed = Object.values<any>(doc.paths).flatMap((methods) => Object.values<any>(methods)).filter((op) => op['x-authentication'] !== 'signing-link');
    expect(keyed.length).toBeGreaterThan(25);
    for (const op of keyed) expect(text).toContain(`  ${op.operationId}: {\n    params:`);
    expect(text).not.toContain('signAgreement');
  });

  it('turns ids into prefixed template literals and enums into literal unions', () => {
    expect(typeOf({ type: 'string', minLength: 30, maxLength: 30, pattern: '^doc_[0-9A-Za-z]{26}$' })).toBe('`doc_${string}`');
    expect(typeOf({ type: 'string', enum: ['DRAFT', 'SENT'] })).toBe("'DRAFT' | 'SENT'");
    expect(typeOf({ anyOf: [{ type: 'string' }, { type: 'null' }] })).toBe('string | null');
    expect(typeOf({ type: 'object', properties: { a: { type: 'integer' }, b: { type: 'boolean' } }, required: ['a'] })).toBe('{\n  a: number;\n  b?: boolean;\n}');
    expect(() => typeOf({ type: 'string', not: {} } as never)).not.toThrow();
    expect(() => typeOf({ oneOf: [] } as never)).toThrow(/no TypeScript type/);
  });
});
