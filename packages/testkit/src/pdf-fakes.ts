import * as TE from '@esig/core/task-either';
import type { FieldProblem, PageSize, PdfInspector, StampCheckInput, StampPreflight } from '@esig/core';
import { invalidDocument } from '@esig/core';

export const LETTER: PageSize = { width: 612, height: 792 };

/**
 * A PdfInspector that believes every upload has the given pages (two Letter pages by default), and keeps
 * the port's contract on them: more than `maxPages` is a refusal, found without reporting the rest.
 */
export const fakePdfInspector = (pages: readonly PageSize[] = [LETTER, LETTER]): PdfInspector => ({
  inspect: (_bytes, { maxPages }) =>
    pages.length > maxPages
      ? TE.left(invalidDocument(`The PDF has more than ${maxPages} pages, the limit per document.`))
      : TE.right({ pageCount: pages.length, pageSizes: [...pages] }),
});

export interface StampPreflightFake extends StampPreflight {
  /** Every input checked, in order. */
  readonly calls: StampCheckInput[];
}

/**
 * A StampPreflight that answers as the port says (problems addressed to `signature.value` for the
 * signature and the stamps derived from it, `values.<fieldId>` for a field's own text) about what
 * `unstampable` says cannot be drawn: a typed text or a drawn data URL. By default everything can.
 */
export const fakeStampPreflight = (unstampable: (source: string) => boolean = () => false): StampPreflightFake => {
  const calls: StampCheckInput[] = [];
  return {
    calls,
    check: (input) => {
      calls.push(input);
      const problems: FieldProblem[] = [];
      // The signature is always checked, whether or not a field shows it: it is recorded either way.
      if (unstampable(input.signature.value)) problems.push({ path: 'signature.value', message: 'cannot be stamped' });
      for (const f of input.fields)
        if (typeof f.value === 'string' && f.type !== 'date_signed' && unstampable(f.value)) problems.push({ path: `values.${f.id}`, message: 'cannot be stamped' });
      return TE.right(problems);
    },
  };
};
