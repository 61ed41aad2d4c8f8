import type { ContentKey } from '@esig/core';

/**
 * The `document_id` column's value for a content key: an upload under its document id, a sealed artifact
 * under `finished:<request>` or `certificate:<request>` (the names rows were written with before the port
 * had typed keys). Ids never contain `:`, so no two keys share a name.
 */
export const contentKeyName = (key: ContentKey): string => (key.kind === 'upload' ? key.documentId : `${key.kind}:${key.requestId}`);
