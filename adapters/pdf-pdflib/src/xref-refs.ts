import { PDFParser, PDFRef, PDFXRefStreamParser } from 'pdf-lib';

/**
 * pdf-lib reads a file's cross-reference entries (a classic table, or a cross-reference stream) into references it
 * then throws away: it finds every object by parsing the file from start to end instead. Each entry still interns
 * a `PDFRef`, which stays in pdf-lib's table for the thread's life (see interned.ts), whether or not any object
 * has that number. An attacker's review filled the table (2^24 entries) with one upload of 443 bytes: a
 * cross-reference stream whose `/Index` names 16 million entries of zero bytes each; smaller ones, accepted one by
 * one, would have failed their request's seal together, and no count of the objects a file holds sees them. So
 * while pdf-lib reads a table's entries, `PDFRef.of` answers one placeholder that nothing keeps (the method runs
 * synchronously, so no other parse can run while the placeholder stands in), and a stream's are not read at all.
 *
 * This patches the pdf-lib build this module imports, the same one the inspector and the renderer use: Node
 * loads the CommonJS build, vitest the ES one. `xref-refs.test.ts` fails if a pdf-lib upgrade renames them.
 */
const placeholder = PDFRef.of(0, 65_535);

const withoutInterning = <T extends object, K extends keyof T>(proto: T, method: K): void => {
  const original = proto[method];
  if (typeof original !== 'function') throw new Error(`pdf-lib has no ${String(method)} to patch`);
  if ((original as { placeholderRefs?: true }).placeholderRefs === true) return;
  const patched = function (this: T, ...args: unknown[]): unknown {
    // eslint-disable-next-line @typescript-eslint/unbound-method -- restored below, a static called on its class
    const of = PDFRef.of;
    PDFRef.of = () => placeholder;
    try {
      return (original as (...a: unknown[]) => unknown).apply(this, args);
    } finally {
      PDFRef.of = of;
    }
  };
  proto[method] = Object.assign(patched, { placeholderRefs: true as const }) as T[K];
};

withoutInterning(PDFParser.prototype as unknown as { maybeParseCrossRefSection: () => unknown }, 'maybeParseCrossRefSection');
// A stream's entries are not even listed: its caller discards the list, and 443 bytes can name 16 million of them,
// each an object in the list (a table's entries take 20 bytes of the file each, so the upload's size bounds them).
const streams = PDFXRefStreamParser.prototype as unknown as { parseEntries: (() => unknown[]) & { placeholderRefs?: true } };
if (typeof streams.parseEntries !== 'function') throw new Error('pdf-lib has no PDFXRefStreamParser.parseEntries to patch');
streams.parseEntries = Object.assign(() => [], { placeholderRefs: true as const });
