import type { PDFDocument, PDFObject } from 'pdf-lib';
import { PDFArray, PDFDict, PDFName, PDFRef, PDFStream } from 'pdf-lib';

/**
 * The most distinct names and references one document may hold. pdf-lib interns every name and reference it
 * reads in tables capped at 2^24 entries (see interned.ts), and a request's seal reads all of its documents (20
 * at most) in one task and writes the finished file's own references besides: twenty documents of 400,000 each,
 * and their copies' references, stay within the cap. Past it the seal would fail for good after everyone had
 * signed, so such a document is refused at upload. An honest file holds a few thousand (a 500-page one: about
 * 3,000); the attacker's review uploaded documents of 900,000 references, each accepted, that failed their
 * request's seal together.
 */
export const MAX_DISTINCT_NAMES_PER_DOCUMENT = 400_000;

/**
 * How many distinct names and references a loaded document holds, in its objects and as their numbers, counting
 * up to `stopAfter` and no further. pdf-lib interns both, so one object stands for each distinct one and a set of
 * the objects counts them. Walked with a stack of its own: nesting is the file's to choose.
 */
export const distinctNamesAndRefs = (doc: PDFDocument, stopAfter: number): number => {
  const seen = new Set<PDFName | PDFRef>();
  const stack: PDFObject[] = [];
  for (const [ref, object] of doc.context.enumerateIndirectObjects()) {
    seen.add(ref);
    stack.push(object);
    while (stack.length > 0) {
      if (seen.size > stopAfter) return seen.size;
      const o = stack.pop()!;
      if (o instanceof PDFName || o instanceof PDFRef) seen.add(o);
      else if (o instanceof PDFArray) for (const item of o.asArray()) stack.push(item);
      else if (o instanceof PDFDict)
        for (const [key, value] of o.entries()) {
          seen.add(key);
          stack.push(value);
        }
      else if (o instanceof PDFStream) stack.push(o.dict);
    }
  }
  return seen.size;
};
