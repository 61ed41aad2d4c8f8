import fc from 'fast-check';
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import type { AdoptedSignature, Field, FieldType, FieldValue } from '@esig/core';
import { checkAdoptedSignature, checkFieldValues } from '@esig/core/internal';
import { makePdf } from '@esig/testkit/pdf';
import { drawnSignatureDataUrl, encodePng, hostileDrawnSignatures } from '@esig/testkit/png';
import { pdfLibRenderer, pdfLibStampPreflight } from '../src/index.js';
import { field } from './fixtures.js';

const check = async (signature: AdoptedSignature, fields: Field[] = []) => {
  const r = await pdfLibStampPreflight.check({ signature, fields })();
  if (E.isLeft(r)) throw new Error(r.left.detail);
  return r.right;
};
const typed = (value: string): AdoptedSignature => ({ kind: 'typed', value });
const drawn = (value: string): AdoptedSignature => ({ kind: 'drawn', value });
const own = (type: FieldType, value: FieldValue | null, over: Partial<Field> = {}) => field({ documentId: 'd', recipientId: 'ada', type, value, ...over });

/** Seals one page with the signer's fields as the seal job would: Right when the request can be sealed. */
const seal = async (signature: AdoptedSignature, fields: Field[]) =>
  pdfLibRenderer.renderFinished({ documents: [{ id: 'd', bytes: await makePdf(1) }], fields, signatures: { ada: signature }, testMode: false })();

describe('pdfLibStampPreflight', () => {
  it('accepts what the seal renders: typed and drawn signatures, every field kind', async () => {
    const fields = [own('signature', true), own('initials', true), own('initials', 'AL'), own('text', 'Ref 4711 — Zoë'), own('name', 'Ada'), own('email', 'ada@example.com'), own('date_signed', '2026-11-23'), own('checkbox', true)];
    expect(await check(typed('Ada Lovelace'), fields)).toEqual([]);
    expect(await check(drawn(drawnSignatureDataUrl()), fields)).toEqual([]);
    // Palette and interlaced PNGs go through pdf-lib's decoder, as in the seal.
    const other = (o: Parameters<typeof encodePng>[3]) => drawn(`data:image/png;base64,${encodePng(60, 20, (x) => (x % 3 ? 0x1a1a5aff : 0), o).toString('base64')}`);
    expect(await check(other({ colour: 'palette' }), fields)).toEqual([]);
    expect(await check(other({ interlace: true }), fields)).toEqual([]);
  });

  it.each(Object.entries(hostileDrawnSignatures()))('refuses a drawn signature that %s, naming signature.value', async (_name, url) => {
    const problems = await check(drawn(url), [own('signature', true)]);
    expect(problems).toEqual([{ path: 'signature.value', message: expect.stringMatching(/^the signature cannot be stamped/) }]);
    // And it is exactly what the seal would have failed on.
    expect(E.isLeft(await seal(drawn(url), [own('signature', true)]))).toBe(true);
  });

  it('names each input at fault, and only those', async () => {
    const good = own('text', 'fine');
    const problems = await check(drawn(hostileDrawnSignatures()['has corrupt image data']!), [own('signature', true), good, own('initials', true)]);
    expect(problems.map((p) => p.path)).toEqual(['signature.value']);
  });
});

/**
 * The property the preflight exists for: whatever text passes the core's checks at signing renders when
 * the request is sealed, in every place it can be stamped (typed signature and the initials drawn from it
 * in the handwriting font, an initials value in the same, a text value in Helvetica).
 */
describe('nothing accepted at signing fails to seal', () => {
  const anyText = fc.oneof(
    fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }),
    fc.string({ unit: fc.constantFrom('\u0000', '\u0007', '\uffff', '\ud800', '\udc00', '\u00ad', '\u202e', 'a', ' ', '\t', 'é', '😀'), minLength: 1, maxLength: 8 }),
  );

  it('a typed signature the core accepts seals, and the preflight accepts it', async () => {
    await fc.assert(
      fc.asyncProperty(anyText, async (text) => {
        const sig = typed(text);
        const fields = [own('signature', true), own('initials', true)];
        const accepted = checkAdoptedSignature(sig) === null;
        const problems = await check(sig, fields);
        const sealed = E.isRight(await seal(sig, fields));
        if (accepted) {
          expect(problems).toEqual([]);
          expect(sealed).toBe(true);
        }
        // The preflight accepts exactly what seals.
        expect(problems.length === 0).toBe(sealed);
      }),
      { numRuns: 40 },
    );
  });

  it('a field value the core accepts seals, and the preflight accepts it', async () => {
    await fc.assert(
      fc.asyncProperty(anyText, fc.constantFrom<FieldType>('text', 'initials', 'name', 'email'), async (text, type) => {
        const f = own(type, text);
        const accepted = checkFieldValues({ [f.id]: text }).length === 0;
        const problems = await check(typed('Ada'), [f]);
        const sealed = E.isRight(await seal(typed('Ada'), [f]));
        if (accepted) {
          expect(problems).toEqual([]);
          expect(sealed).toBe(true);
        }
        expect(problems.length === 0).toBe(sealed);
      }),
      { numRuns: 40 },
    );
  });
});
