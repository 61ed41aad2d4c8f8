import type { PDFFont, PDFPage } from 'pdf-lib';
import { concatTransformationMatrix, popGraphicsState, pushGraphicsState, rgb } from 'pdf-lib';

/** The visible mark of test mode, on every page of both artifacts. pdf-lib's WinAnsi fonts encode the em dash. */
export const TEST_MARK = 'TEST — not legally binding';

/** Width and height of a page as a viewer shows it (its crop box, turned by its /Rotate). */
export interface DisplaySize {
  readonly width: number;
  readonly height: number;
}

/**
 * Runs `draw` in the page's displayed space: origin at the bottom-left of the page as a viewer shows it,
 * x to the right, y up, whatever the page's crop box offset and /Rotate. Field coordinates are given in that
 * space (from its top-left), so a field on a rotated scan lands where the sender placed it.
 */
export const inDisplaySpace = (page: PDFPage, draw: (size: DisplaySize) => void): void => {
  const { x, y, width: w, height: h } = page.getCropBox();
  const rotation = (((page.getRotation().angle % 360) + 360) % 360) as number;
  // user = M · display, written as the PDF matrix [a b c d e f].
  const [m, size]: [readonly [number, number, number, number, number, number], DisplaySize] =
    rotation === 90
      ? [[0, 1, -1, 0, x + w, y], { width: h, height: w }]
      : rotation === 180
        ? [[-1, 0, 0, -1, x + w, y + h], { width: w, height: h }]
        : rotation === 270
          ? [[0, -1, 1, 0, x, y + h], { width: h, height: w }]
          : [[1, 0, 0, 1, x, y], { width: w, height: h }];
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
