import * as TE from '@esig/core/task-either';
import type { Field, FieldProblem, StampCheckInput, StampPreflight } from '@esig/core';
import { PDFDocument } from 'pdf-lib';
import type { Stamp } from './finished.js';
import { Resources, signatureStamp, stampFor } from './finished.js';
import { RenderError, toRenderFailure } from './render-failure.js';

/** Whose input a field's stamp is drawn from: the adopted signature, or the field's own value. */
const pathOf = (f: Field): string =>
  f.type === 'signature' || (f.type === 'initials' && f.value === true) ? 'signature.value' : `values.${f.id}`;

interface Source {
  readonly path: string;
  readonly make: (res: Resources) => Promise<Stamp | null>;
  /** Where to draw: the field's own box (its size is what the seal fits text to). */
  readonly box: { readonly width: number; readonly height: number };
}

/** The recipient id under which the preflight keys the signature; any id works, it never leaves here. */
const SIGNER = 'preflight';

const sourcesOf = (input: StampCheckInput): Source[] => {
  const signatures = { [SIGNER]: input.signature };
  return [
    // Checked even when no field shows it: it is recorded, and a later field type might.
    { path: 'signature.value', make: (res) => signatureStamp(res, SIGNER, input.signature), box: { width: 200, height: 50 } },
    ...input.fields.map((f) => ({
      path: pathOf(f),
      make: (res: Resources) => stampFor(res, { ...f, recipientId: SIGNER }, signatures),
      box: { width: f.width, height: f.height },
    })),
  ];
};

/**
 * Stamps `sources` on one page of a new document and saves it: the seal's own code from decoding the
 * image to subsetting the fonts, which happens only when the document is saved.
 */
const stampAndSave = async (sources: readonly Source[]): Promise<void> => {
  const doc = await PDFDocument.create({ updateMetadata: false });
  const page = doc.addPage([612, 792]);
  const res = new Resources(doc);
  for (const s of sources) {
    const stamp = await s.make(res);
    stamp?.(page, { x: 0, y: 0, ...s.box });
  }
  await doc.save();
};

const messageFor = (path: string, e: unknown): string => {
  const reason = e instanceof RenderError ? e.message.replace(/\.$/, '') : null;
  if (path !== 'signature.value') return 'cannot be drawn in the finished document';
  return reason ? `the signature cannot be stamped: ${reason}` : 'the signature cannot be stamped in the finished document';
};

/**
 * Checks on the calling thread (the worker pool runs this) that everything one signer's signature puts on
 * the document renders: all stamps together first, the common case costing one small document; only when
 * that fails, each on its own, to name every input at fault.
 */
export const checkStamps = async (input: StampCheckInput): Promise<FieldProblem[]> => {
  const sources = sourcesOf(input);
  try {
    await stampAndSave(sources);
    return [];
  } catch {
    const problems = new Map<string, string>();
    for (const s of sources) {
      if (problems.has(s.path)) continue;
      try {
        await stampAndSave([s]);
      } catch (e) {
        problems.set(s.path, messageFor(s.path, e));
      }
    }
    // Failing together but never alone would be a renderer bug; refuse rather than accept the unsealable.
    if (problems.size === 0) problems.set('signature.value', 'the signature and values cannot be stamped together');
    return [...problems].map(([path, message]) => ({ path, message }));
  }
};

/** The StampPreflight on the calling thread; a server uses the worker pool's (`createPdfWorkerPool().stamps`). */
export const pdfLibStampPreflight: StampPreflight = {
  check: (input) => TE.tryCatch(() => checkStamps(input), toRenderFailure),
};
