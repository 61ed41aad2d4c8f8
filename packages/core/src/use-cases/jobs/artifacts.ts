import type { ContentKey } from '../../ports/document-content-store.js';

/** Where the sealed artifacts of a request are kept in the DocumentContentStore. */
export const finishedKey = (requestId: string): ContentKey => ({ kind: 'finished', requestId });
export const certificateKey = (requestId: string): ContentKey => ({ kind: 'certificate', requestId });
/** An uploaded document's bytes. */
export const uploadKey = (documentId: string): ContentKey => ({ kind: 'upload', documentId });
