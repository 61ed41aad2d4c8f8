import type { Task } from 'fp-ts/lib/Task.js';

/**
 * Fetches a Client ID Metadata Document: an https GET under the outbound-request rules (no private
 * addresses, a size limit, a timeout, no redirects). Never fails: every outcome is a value. A failure's
 * `reason` is shown to the client: it says what is wrong with the URL or the document, never the server's
 * view of the network (a resolver's or a connection's error, the address a name resolved to) — anyone may
 * name any URL as a `client_id`.
 */
export interface ClientMetadataFetcher {
  fetch(url: string): Task<{ readonly ok: true; readonly json: unknown } | { readonly ok: false; readonly reason: string }>;
}
