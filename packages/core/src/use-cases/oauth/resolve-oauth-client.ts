import * as TE from '../../task-either.js';
import { pipe } from 'fp-ts/lib/function.js';
import type { StoreError } from '../../errors.js';
import type { OAuthClient } from '../../model/oauth.js';
import type { ClientMetadataFetcher } from '../../ports/client-metadata-fetcher.js';
import type { Clock } from '../../ports/clock.js';
import type { Stores } from '../../ports/stores.js';
import type { OAuthError } from './oauth-error.js';
import { oauthError } from './oauth-error.js';
import { checkClientMetadata } from './register-oauth-client.js';
import { isMetadataDocumentClientId, urlHost } from './rules.js';
import { unstorableText } from '../../storable-text.js';

const isStringArray = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string');

/**
 * Reads a Client ID Metadata Document: its `client_id` must be the URL it was fetched from, its
 * `redirect_uris` follow the registration rules, and it must be a public client (no secret to present).
 */
export const clientFromMetadataDocument = (url: string, json: unknown, now: Date): OAuthClient | OAuthError => {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return oauthError('invalid_client', 'The client metadata document is not a JSON object.');
  const doc = json as Record<string, unknown>;
  if (doc.client_id !== url) return oauthError('invalid_client', 'The client metadata document names another client_id than its URL.');
  if (!isStringArray(doc.redirect_uris)) return oauthError('invalid_client', 'The client metadata document has no redirect_uris array.');
  const method = doc.token_endpoint_auth_method;
  if (method !== undefined && method !== 'none') return oauthError('invalid_client', 'Only public clients (token_endpoint_auth_method "none") are supported.');
  const name = typeof doc.client_name === 'string' ? doc.client_name : undefined;
  const problem = checkClientMetadata({ clientName: name, redirectUris: doc.redirect_uris });
  if (problem !== null) return oauthError('invalid_client', `The client metadata document: ${problem.description}`);
  return { id: url, name: name?.trim() ?? urlHost(url), redirectUris: doc.redirect_uris, kind: 'metadata_document', createdAt: now.toISOString() };
};

/**
 * The client a `client_id` names: a registered client from the store, or, for an https URL, the client its
 * metadata document describes (fetched through `metadata`, which applies the outbound-request rules and its
 * cache). Unknown → `invalid_client`.
 */
export const resolveOAuthClient =
  (deps: { readonly stores: Stores; readonly metadata: ClientMetadataFetcher; readonly clock: Clock }) =>
  (clientId: string): TE.TaskEither<OAuthError | StoreError, OAuthClient> => {
    if (isMetadataDocumentClientId(clientId))
      return pipe(
        TE.fromTask(deps.metadata.fetch(clientId)),
        TE.chainW((r) => {
          if (!r.ok) return TE.left(oauthError('invalid_client', `The client metadata document could not be fetched: ${r.reason}`));
          const c = clientFromMetadataDocument(clientId, r.json, deps.clock.now());
          return '_tag' in c ? TE.left(c) : TE.right(c);
        }),
      );
    // No client's id holds text a store cannot keep, and PostgreSQL fails a lookup by one (a 500 before).
    if (unstorableText(clientId) !== null) return TE.left(oauthError('invalid_client', 'The client_id is unknown.'));
    return pipe(
      deps.stores.oauth.findClient(clientId),
      TE.chainW((c) => (c === null ? TE.left(oauthError('invalid_client', 'The client_id is unknown.')) : TE.right(c))),
    );
  };
