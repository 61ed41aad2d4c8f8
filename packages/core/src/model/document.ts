import type { Mode } from './tenant';

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
  readonly sizeBytes: number;
  readonly sha256: string;
  /** A document belongs to at most one signature request. */
  readonly signatureRequestId: string | null;
  readonly createdAt: string;
}
