import type { PDFFont, PDFPage } from 'pdf-lib';
import { PDFArray, PDFName, PDFNumber, concatTransformationMatrix, popGraphicsState, pushGraphicsState, rgb } from 'pdf-lib';

/** The visible mark of test mode, on every page of both artifacts. pdf-lib's WinAnsi fonts encode the em dash. */
export const TEST_MARK = 'TEST — not legally binding';

/** Width and height of a page as a viewer shows it (its crop box, turned by its /Rotate). */
export interface DisplaySize {
  readonly width: number;
  readonly height: number;
}

/** A rectangle in a page's default user space, normalized: lower-left corner, width and height ≥ 0. */
export interface Rect {
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
}

/** The box viewers (pdf.js among them) assume for a page that has no MediaBox: US Letter. */
export const DEFAULT_MEDIA_BOX: Rect = { x: 0, y: 0, width: 612, height: 792 };

/**
 * How a page is displayed: the region shown (the crop box within the media box), its /Rotate, and the
 * resulting size. `mediaBox` says whether the page's own (or inherited) MediaBox was used, was absent
 * (US Letter assumed) or is unusable (not four numbers, or no area).
 */
export interface PageGeometry {
  readonly box: Rect;
  readonly rotation: 0 | 90 | 180 | 270;
  readonly size: DisplaySize;
  readonly mediaBox: 'given' | 'missing' | 'invalid';
}

/** A page attribute (inherited from the page tree where the page lacks it) as a rectangle; undefined when absent, null when malformed. */
const readRect = (page: PDFPage, name: 'MediaBox' | 'CropBox'): Rect | null | undefined => {
  const raw = page.node.getInheritableAttribute(PDFName.of(name));
  if (raw === undefined) return undefined;
  const array = page.node.context.lookup(raw);
  if (!(array instanceof PDFArray) || array.size() !== 4) return null;
  const n = [0, 1, 2, 3].map((i) => {
    const v = page.node.context.lookup(array.get(i));
    return v instanceof PDFNumber ? v.asNumber() : Number.NaN;
  });
  if (!n.every(Number.isFinite)) return null;
  // Any two opposite corners define a rectangle (ISO 32000-1, 7.9.5).
  const [x1, y1, x2, y2] = n as [number, number, number, number];
  const width = Math.abs(x2 - x1);
  const height = Math.abs(y2 - y1);
  // Finite corners can be so far apart that the size between them is not (±1e308): no page to measure.
  if (!Number.isFinite(width) || !Number.isFinite(height)) return null;
  return { x: Math.min(x1, x2), y: Math.min(y1, y2), width, height };
};

const intersect = (a: Rect, b: Rect): Rect | null => {
  const x = Math.max(a.x, b.x);
  const y = Math.max(a.y, b.y);
  const width = Math.min(a.x + a.width, b.x + b.width) - x;
  const height = Math.min(a.y + a.height, b.y + b.height) - y;
  return width > 0 && height > 0 ? { x, y, width, height } : null;
};

/**
 * The page as a viewer displays it, read as pdf.js does: the crop box clipped to the media box (the media
 * box when the crop box is absent, malformed or outside it), US Letter when the MediaBox is missing or
 * unusable, and /Rotate taken modulo 360 (0 when it is not a multiple of 90). The inspector measures pages
 * with this, and the renderer stamps in the same space, so a field checked against a page lands on it.
 */
export const pageGeometry = (page: PDFPage): PageGeometry => {
  const media = readRect(page, 'MediaBox');
  const usable = media && media.width > 0 && media.height > 0 ? media : null;
  const mediaBox = usable ? 'given' : media === undefined ? 'missing' : 'invalid';
  const base = usable ?? DEFAULT_MEDIA_BOX;
  const crop = readRect(page, 'CropBox');
  const box = (crop && intersect(crop, base)) ?? base;
  const rotate = page.node.context.lookup(page.node.getInheritableAttribute(PDFName.of('Rotate')));
  const angle = rotate instanceof PDFNumber && Number.isInteger(rotate.asNumber()) && rotate.asNumber() % 90 === 0 ? rotate.asNumber() : 0;
  const rotation = (((angle % 360) + 360) % 360) as PageGeometry['rotation'];
  const turned = rotation === 90 || rotation === 270;
  return { box, rotation, size: turned ? { width: box.height, height: box.width } : { width: box.width, height: box.height }, mediaBox };
};

/**
 * Runs `draw` in the page's displayed space: origin at the bottom-left of the page as a viewer shows it,
 * x to the right, y up, whatever the page's crop box offset and /Rotate (see pageGeometry). Field
 * coordinates are given in that space (from its top-left), so a field on a rotated scan lands where the
 * sender placed it.
 */
export const inDisplaySpace = (page: PDFPage, draw: (size: DisplaySize) => void): void => {
  const { box, rotation, size } = pageGeometry(page);
  const { x, y, width: w, height: h } = box;
  // user = M · display, written as the PDF matrix [a b c d e f].
  const m: readonly [number, number, number, number, number, number] =
    rotation === 90
      ? [0, 1, -1, 0, x + w, y]
      : rotation === 180
        ? [-1, 0, 0, -1, x + w, y + h]
        : rotation === 270
          ? [0, -1, 1, 0, x, y + h]
          : [1, 0, 0, 1, x, y];
  page.pushOperators(pushGraphicsState(), concatTransformationMatrix(...m));
  draw(size);
  page.pushOperators(popGraphicsState());
};

/** A red band across the top of the page, as displayed, carrying TEST_MARK as real (extractable) text. */
export const drawTestBanner = (page: PDFPage, bold: PDFFont): void =>
  inDisplaySpace(page, ({ width, height }) => {
    const band = 18;
    const size = 10;
    page.drawRectangle({ x: 0, y: height - band, width, height: band, color: rgb(0.8, 0.1, 0.1), opacity: 0.85 });
    const textWidth = bold.widthOfTextAtSize(TEST_MARK, size);
    page.drawText(TEST_MARK, {
      x: (width - textWidth) / 2,
      y: height - band + (band - bold.heightAtSize(size, { descender: false })) / 2,
      size,
      font: bold,
      color: rgb(1, 1, 1),
    });
  });
