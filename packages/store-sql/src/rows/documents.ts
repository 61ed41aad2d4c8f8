import type { Document } from '@esig/core';
import { DOCUMENT_STATUSES } from '@esig/core';
import * as t from 'io-ts';
import type { ColumnCodecs } from '../columns';
import { Int, ModeC, nullable, oneOf } from '../decode';

export const DocumentStatusC = oneOf(DOCUMENT_STATUSES, 'DocumentStatus');

export const documentRow = (c: ColumnCodecs) =>
  t.type({
    id: t.string,
    org_id: t.string,
    mode: ModeC,
    name: t.string,
    status: DocumentStatusC,
    page_count: Int,
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
  sizeBytes: r.size_bytes,
  sha256: r.sha256,
  signatureRequestId: r.signature_request_id,
  createdAt: r.created_at,
});
