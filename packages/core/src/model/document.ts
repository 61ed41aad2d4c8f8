import type { Mode } from './tenant.js';

export const DOCUMENT_STATUSES = ['UPLOADED', 'PENDING', 'COMPLETED', 'DECLINED', 'EXPIRED', 'CANCELLED'] as const;
export type DocumentStatus = (typeof DOCUMENT_STATUSES)[number];

/** An uploaded PDF. Its bytes live in the DocumentContentStore; this record is the metadata. */
export interface Document {
  readonly id: string;
  readonly orgId: string;
  readonly mode: Mode;
  readonly name: string;
  readonly status: DocumentStatus;
  readonly pageCount: number;
  /**
   * Each page's size as a viewer displays it, in order; null for a document stored before sizes were
   * recorded (its fields are then not checked against the page).
   */
  readonly pageSizes: readonly PageSize[] | null;
  readonly sizeBytes: number;
  readonly sha256: string;
  /** A document belongs to at most one signature request. */
  readonly signatureRequestId: string | null;
  readonly createdAt: string;
}

/**
 * A page's size in PDF points as a viewer displays it: its crop box, turned by its /Rotate. Field boxes
 * (origin top-left) are given in this space.
 */
export interface PageSize {
  readonly width: number;
  readonly height: number;
}

/**
 * Bounds on the PDF work one upload or one request can cause: parsing, copying and stamping grow with
 * pages, so a document or a request may not have more than these.
 */
export interface PageLimits {
  readonly maxPagesPerDocument: number;
  readonly maxPagesPerRequest: number;
}

/** The defaults of `ESIG_MAX_PAGES_PER_DOCUMENT` and `ESIG_MAX_PAGES_PER_REQUEST`. */
export const DEFAULT_PAGE_LIMITS: PageLimits = { maxPagesPerDocument: 500, maxPagesPerRequest: 1000 };

/**
 * Slack for comparing a field's far edge with the page's: sizes come from PDF reals and boxes from JSON
 * numbers, so `x + width` may miss the page's width by rounding alone.
 */
const EDGE_TOLERANCE = 1e-6;

/** Whether a box (origin top-left, points) lies inside a page of `size`. */
export const boxFitsPage = (box: { x: number; y: number; width: number; height: number }, size: PageSize): boolean =>
  box.x + box.width <= size.width + EDGE_TOLERANCE && box.y + box.height <= size.height + EDGE_TOLERANCE;
