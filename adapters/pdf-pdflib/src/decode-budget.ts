import { AsyncLocalStorage } from 'node:async_hooks';
import { createRequire } from 'node:module';

/**
 * How far the streams pdf-lib decodes may expand: in all, while a file is inspected (`withDecodeBudget`), and
 * each, anywhere else. pdf-lib decodes an object stream or a cross-reference stream whole as it loads a file, into
 * memory no heap limit covers: a 2 MB upload whose object stream inflated to 2 GiB took a server to 4.4 GB. Real
 * files' object streams hold dictionaries, which compress a few times over, so this is far above what the 25 MiB
 * an upload may have holds, decoded into buffers that grow by doubling (what is counted is what they allocate).
 */
export const MAX_DECODED_BYTES = 256 * 1024 * 1024;

/** Thrown from inside pdf-lib's decoding when a stream would expand past what is left. */
export class DecodeLimitExceeded extends Error {
  constructor(readonly limitBytes: number) {
    super(`decoded streams would exceed ${limitBytes} bytes`);
  }
}

interface Budget {
  readonly limit: number;
  left: number;
  /** Set once a decode was stopped: pdf-lib may catch the error and throw one of its own in its place. */
  exceeded: boolean;
}

const budgets = new AsyncLocalStorage<Budget>();

interface DecodeStreamPrototype {
  buffer: Uint8Array;
  minBufferLength: number;
  ensureBuffer(requested: number): Uint8Array;
}

/**
 * Every decoder of pdf-lib (Flate, LZW, run-length, ASCII hex and 85) extends its DecodeStream, which grows its
 * one output buffer through `ensureBuffer` as it decodes. Counting the growth there bounds the real expansion,
 * however the file spells the stream's type or filters (`/Obj#53tm`, an indirect `/Filter`, a chain). pdf-lib ships
 * two builds: Node loads the CommonJS one (its package names `main` and no `exports`), a bundler may pick the ES
 * module one (`module`; vitest does), each with its own class, so both are guarded. `inspector.test.ts`
 * (decompression bombs) fails if a pdf-lib upgrade moves or renames them.
 */
const guard = (mod: { default?: { prototype: DecodeStreamPrototype } }): void => {
  const proto = mod.default?.prototype;
  if (proto === undefined || typeof proto.ensureBuffer !== 'function') throw new Error('pdf-lib has no DecodeStream.prototype.ensureBuffer to guard');
  const ensureBuffer = proto.ensureBuffer;
  if ((ensureBuffer as { guarded?: true }).guarded === true) return;
  const guarded = function (this: DecodeStreamPrototype, requested: number): Uint8Array {
    const have = this.buffer.byteLength;
    if (requested > have) {
      // What the original is about to allocate (it doubles from minBufferLength), counted before it does: a
      // stream's buffer is asked for a little more than it holds each time, so the request alone says little.
      let size = this.minBufferLength;
      while (size < requested) size *= 2;
      const budget = budgets.getStore();
      if (budget === undefined) {
        if (size > MAX_DECODED_BYTES) throw new DecodeLimitExceeded(MAX_DECODED_BYTES);
      } else if ((budget.left -= size - have) < 0) {
        budget.exceeded = true;
        throw new DecodeLimitExceeded(budget.limit);
      }
    }
    return ensureBuffer.call(this, requested);
  };
  proto.ensureBuffer = Object.assign(guarded, { guarded: true as const });
};
guard(createRequire(import.meta.url)('pdf-lib/cjs/core/streams/DecodeStream.js') as { default?: { prototype: DecodeStreamPrototype } });
// Node cannot load the ES module build (its files are `.js` in a package that is not `"type": "module"`), and has
// no use for it: that import fails there, and only there.
await import('pdf-lib/es/core/streams/DecodeStream.js').then(
  (mod) => guard(mod as unknown as { default?: { prototype: DecodeStreamPrototype } }),
  () => undefined,
);

/** Runs `work` with at most `limit` bytes decoded by pdf-lib in all, across every stream it decodes meanwhile. */
export const withDecodeBudget = <A>(limit: number, work: () => Promise<A>): Promise<A> => budgets.run({ limit, left: limit, exceeded: false }, work);

/**
 * The budget's limit if a decode was stopped for it within the current `withDecodeBudget`, else null: what a
 * failure was really about, whatever error pdf-lib turned it into.
 */
export const decodeBudgetExceeded = (): number | null => {
  const budget = budgets.getStore();
  return budget?.exceeded === true ? budget.limit : null;
};
