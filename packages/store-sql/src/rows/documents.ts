import type { AttachLimits, Document } from '@esig/core';
import { DOCUMENT_STATUSES } from '@esig/core';
import * as t from 'io-ts';
import type { ColumnCodecs } from '../columns.js';
import { Int, ModeC, nullable, oneOf, rowType } from '../decode.js';

export const DocumentStatusC = oneOf(DOCUMENT_STATUSES, 'DocumentStatus');

const PositivePoints = t.refinement(t.number, (n) => Number.isFinite(n) && n > 0, 'PositivePoints');

/** Each page's displayed size, in points: a JSON array of `{ width, height }`. */
export const PageSizesC = t.readonlyArray(rowType({ width: PositivePoints, height: PositivePoints }), 'PageSizes');

export const documentRow = (c: ColumnCodecs) =>
  rowType({
    id: t.string,
    org_id: t.string,
    mode: ModeC,
    name: t.string,
    status: DocumentStatusC,
    page_count: Int,
    // NULL for documents stored before sizes were recorded (migration 0004 on SQLite, 0005 on PostgreSQL).
    page_sizes: nullable(c.json(PageSizesC)),
    size_bytes: c.bigint,
    sha256: t.string,
    signature_request_id: nullable(t.string),
    created_at: c.timestamp,
  });
type DocumentRow = t.TypeOf<ReturnType<typeof documentRow>>;

export const toDocument = (r: DocumentRow): Document => ({
  id: r.id,
  orgId: r.org_id,
  mode: r.mode,
  name: r.name,
  status: r.status,
  pageCount: r.page_count,
  pageSizes: r.page_sizes,
  sizeBytes: r.size_bytes,
  sha256: r.sha256,
  signatureRequestId: r.signature_request_id,
  createdAt: r.created_at,
});

/**
 * A page limit as both SQL stores' attach statements take it (an integer, compared with `page_count` and its sum):
 * a fraction counts as the whole pages under it, and no limit, Infinity, NaN or one above `noLimit` (the most the
 * statement's parameter holds) as `noLimit`, as the memory store treats them. So whatever number a configuration
 * gives, the statement never fails on it.
 */
export const attachPageLimit = (limits: AttachLimits | undefined, noLimit: number): number =>
  limits === undefined || !(limits.maxPages < noLimit) ? noLimit : Math.max(0, Math.floor(limits.maxPages));

