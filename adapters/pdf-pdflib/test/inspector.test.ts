import * as E from 'fp-ts/Either';
import { describe, expect, it } from 'vitest';
import { makeEmptyPdf, makeEncryptedPdf, makePdf } from '@esig/testkit/pdf';
import { pdfLibInspector } from '../src';

const inspect = async (bytes: Uint8Array) => pdfLibInspector.inspect(bytes)();

describe('pdfLibInspector', () => {
  it('counts the pages of a real PDF', async () => {
    expect(await inspect(await makePdf(3))).toEqual(E.right({ pageCount: 3 }));
  });

  it.each([
    ['not a PDF at all', async () => new TextEncoder().encode('hello, world'), 'The file is not a PDF.'],
    ['a PDF header followed by garbage', async () => new TextEncoder().encode('%PDF-1.7\n garbage'), 'The file could not be read as a PDF.'],
    ['an encrypted PDF', makeEncryptedPdf, 'The PDF is encrypted; upload an unprotected copy.'],
    ['a PDF without pages', makeEmptyPdf, 'The PDF has no pages.'],
    ['an empty file', async () => new Uint8Array(), 'The file is not a PDF.'],
    ['a truncated PDF', async () => (await makePdf(2)).subarray(0, 200), 'The file could not be read as a PDF.'],
  ])('refuses %s', async (_name, make, detail) => {
    expect(await inspect(await make())).toEqual(E.left({ _tag: 'InvalidDocument', detail }));
  });
});
