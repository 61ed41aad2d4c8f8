import { execFile } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Runs `fn` with `bytes` written to a temporary PDF file, then removes it. */
const withFile = async <A>(bytes: Uint8Array, fn: (path: string) => Promise<A>): Promise<A> => {
  const dir = await mkdtemp(join(tmpdir(), 'esig-pdf-'));
  try {
    const path = join(dir, 'doc.pdf');
    await writeFile(path, bytes);
    return await fn(path);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
};

/** `qpdf --check`: resolves with its exit code (0: clean, 2: errors, 3: warnings) and output. */
export const qpdfCheck = (bytes: Uint8Array): Promise<{ code: number; output: string }> =>
  withFile(bytes, async (path) => {
    try {
      const { stdout, stderr } = await run('qpdf', ['--check', path]);
      return { code: 0, output: stdout + stderr };
    } catch (e) {
      const err = e as { code?: number; stdout?: string; stderr?: string };
      return { code: typeof err.code === 'number' ? err.code : -1, output: `${err.stdout ?? ''}${err.stderr ?? ''}` };
    }
  });

/**
 * The document as qpdf rewrites it in QDF form, with no object streams, streams uncompressed and a fixed
 * ID: two files holding the same objects give the same text, however they were compressed and packed.
 */
export const qpdfNormalized = (bytes: Uint8Array): Promise<string> =>
  withFile(bytes, async (path) => {
    const out = `${path}.qdf`;
    await run('qpdf', ['--qdf', '--object-streams=disable', '--static-id', path, out]);
    return (await readFile(out)).toString('latin1');
  });

/**
 * The document encrypted by qpdf as a real writer encrypts: AES with object streams, an empty user password (any
 * reader opens it) unless `userPassword` is given.
 */
export const qpdfEncrypted = (bytes: Uint8Array, o: { readonly bits: 128 | 256; readonly userPassword?: string }): Promise<Uint8Array> =>
  withFile(bytes, async (path) => {
    const out = `${path}.enc.pdf`;
    await run('qpdf', ['--encrypt', o.userPassword ?? '', 'owner-secret', String(o.bits), ...(o.bits === 128 ? ['--use-aes=y'] : []), '--', path, out]);
    return new Uint8Array(await readFile(out));
  });

/** `pdftotext` of the whole document, or of one 1-based page. */
export const pdfText = (bytes: Uint8Array, page?: number): Promise<string> =>
  withFile(bytes, async (path) => {
    const range = page === undefined ? [] : ['-f', String(page), '-l', String(page)];
    return (await run('pdftotext', [...range, '-enc', 'UTF-8', path, '-'])).stdout;
  });

/** Whitespace collapsed to single spaces, so wrapped lines read as one. */
export const flat = (s: string): string => s.replace(/\s+/g, ' ');

export interface Word {
  readonly text: string;
  readonly xMin: number;
  readonly yMin: number;
  readonly xMax: number;
  readonly yMax: number;
}

/** The words of one page with their boxes, in points from the displayed page's top-left (`pdftotext -bbox`). */
export const pdfWords = (bytes: Uint8Array, page: number): Promise<Word[]> =>
  withFile(bytes, async (path) => {
    const { stdout } = await run('pdftotext', ['-bbox', '-f', String(page), '-l', String(page), path, '-']);
    const re = /<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)<\/word>/g;
    return [...stdout.matchAll(re)].map((m) => ({ xMin: +m[1]!, yMin: +m[2]!, xMax: +m[3]!, yMax: +m[4]!, text: m[5]! }));
  });

export interface ImageInfo {
  readonly page: number;
  readonly type: string;
  readonly width: number;
  readonly height: number;
}

/** `pdfimages -list`: every image (and soft mask) drawn, with its page. */
export const pdfImages = (bytes: Uint8Array): Promise<ImageInfo[]> =>
  withFile(bytes, async (path) => {
    const { stdout } = await run('pdfimages', ['-list', path]);
    return stdout
      .split('\n')
      .slice(2)
      .map((l) => l.trim().split(/\s+/))
      .filter((c) => c.length > 5)
      .map((c) => ({ page: +c[0]!, type: c[2]!, width: +c[3]!, height: +c[4]! }));
  });

/** The samples of one image as a PDF reader decodes them: three bytes a pixel (`rgb`) or one (`gray`). */
export interface ImageSamples {
  readonly kind: 'rgb' | 'gray';
  readonly width: number;
  readonly height: number;
  readonly samples: Buffer;
}

/** `pdfimages` (PPM and PGM output): every image and soft mask, decoded by poppler, in the order listed. */
export const pdfImageSamples = (bytes: Uint8Array): Promise<ImageSamples[]> =>
  withFile(bytes, async (path) => {
    await run('pdfimages', [path, `${path}-img`]);
    const dir = path.slice(0, path.lastIndexOf('/'));
    const files = (await readdir(dir)).filter((f) => f.startsWith('doc.pdf-img')).sort();
    return Promise.all(
      files.map(async (f) => {
        const data = await readFile(join(dir, f));
        // Binary PPM/PGM: "P6|P5\n<w> <h>\n<max>\n" then the samples.
        const header = /^P([56])\s+(\d+)\s+(\d+)\s+(\d+)\s/.exec(data.subarray(0, 64).toString('latin1'));
        if (!header) throw new Error(`pdfimages wrote ${f}, not a PPM or PGM`);
        return { kind: header[1] === '6' ? 'rgb' : 'gray', width: +header[2]!, height: +header[3]!, samples: data.subarray(header[0].length) } as const;
      }),
    );
  });

/** `pdffonts`: the name of every font and whether it is embedded and subset. */
export const pdfFonts = (bytes: Uint8Array): Promise<{ name: string; embedded: boolean; subset: boolean }[]> =>
  withFile(bytes, async (path) => {
    const { stdout } = await run('pdffonts', [path]);
    return stdout
      .split('\n')
      .slice(2)
      .filter((l) => l.trim().length > 0)
      .map((l) => {
        const c = l.trim().split(/\s+/);
        // name type [encoding…] emb sub uni object ID: the flags are fixed from the end.
        return { name: c[0]!, embedded: c[c.length - 5] === 'yes', subset: c[c.length - 4] === 'yes' };
      });
  });

/**
 * Dark pixels (below half grey) in a rectangle of a page rendered at 72 dpi, the rectangle in points from
 * the displayed page's top-left: whether something visible was drawn there.
 */
export const darkPixels = (bytes: Uint8Array, page: number, r: { x: number; y: number; width: number; height: number }): Promise<number> =>
  withFile(bytes, async (path) => {
    const args = ['-r', '72', '-gray', '-f', String(page), '-l', String(page), '-x', String(r.x), '-y', String(r.y), '-W', String(r.width), '-H', String(r.height), path];
    const { stdout } = await run('pdftoppm', args, { encoding: 'buffer', maxBuffer: 64 * 1024 * 1024 });
    // Binary PGM: "P5\n<w> <h>\n<max>\n" then one byte per pixel.
    const header = /^P5\s+(\d+)\s+(\d+)\s+(\d+)\s/.exec(stdout.subarray(0, 64).toString('latin1'));
    if (!header) throw new Error('pdftoppm did not produce a PGM');
    const pixels = stdout.subarray(header[0].length);
    let dark = 0;
    for (const p of pixels) if (p < 128) dark++;
    return dark;
  });
