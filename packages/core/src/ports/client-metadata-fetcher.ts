import type { Task } from 'fp-ts/lib/Task.js';

/**
 * Fetches a Client ID Metadata Document: an https GET under the outbound-request rules (no private
 * addresses, a size limit, a timeout, no redirects). Never fails: every outcome is a value.
 */
export interface ClientMetadataFetcher {
  fetch(url: string): Task<{ readonly ok: true; readonly json: unknown } | { readonly ok: false; readonly reason: string }>;
}
