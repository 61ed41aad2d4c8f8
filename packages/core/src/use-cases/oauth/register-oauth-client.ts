import * as TE from '../../task-either.js';
import { pipe } from 'fp-ts/lib/function.js';
import type { StoreError } from '../../errors.js';
import type { OAuthClient } from '../../model/oauth.js';
import type { Clock } from '../../ports/clock.js';
import type { IdGenerator } from '../../ports/id-generator.js';
import type { Stores } from '../../ports/stores.js';
import type { OAuthError } from './oauth-error.js';
import { oauthError } from './oauth-error.js';
import { redirectUriProblem } from './rules.js';
import { unstorableText } from '../../storable-text.js';

export interface ClientRegistration {
  readonly clientName: string | undefined;
  readonly redirectUris: readonly string[];
}

export const MAX_REDIRECT_URIS = 10;
export const MAX_CLIENT_NAME = 200;

/** Checks a client's name and redirect URIs, as registration and metadata documents both need. */
export const checkClientMetadata = (input: ClientRegistration): OAuthError | null => {
  if (input.redirectUris.length === 0 || input.redirectUris.length > MAX_REDIRECT_URIS)
    return oauthError('invalid_redirect_uri', `redirect_uris must hold 1 to ${MAX_REDIRECT_URIS} URIs.`);
  for (const uri of input.redirectUris) {
    if (unstorableText(uri) !== null) return oauthError('invalid_redirect_uri', 'a redirect_uri must not contain NUL or unpaired surrogate characters.');
    const problem = redirectUriProblem(uri);
    if (problem !== null) return oauthError('invalid_redirect_uri', `redirect_uri ${JSON.stringify(uri.slice(0, 200))} ${problem}.`);
  }
  if (input.clientName !== undefined && unstorableText(input.clientName) !== null)
    return oauthError('invalid_client_metadata', 'client_name must not contain NUL or unpaired surrogate characters.');
  if (input.clientName !== undefined && (input.clientName.trim().length === 0 || input.clientName.length > MAX_CLIENT_NAME))
    return oauthError('invalid_client_metadata', `client_name must be 1 to ${MAX_CLIENT_NAME} characters.`);
  return null;
};

/**
 * Dynamic client registration (RFC 7591) of a public client: no secret, PKCE is its proof. Redirect URIs
 * must be https, or http on a loopback host.
 *
 * @example
 * const registered = await deps.uow.transaction(registerOAuthClient(deps)({ clientName: 'Claude', redirectUris: ['https://claude.ai/api/mcp/auth_callback'] }))();
 */
export const registerOAuthClient =
  (deps: { readonly clock: Clock; readonly ids: IdGenerator }) =>
  (input: ClientRegistration) =>
  (tx: Stores): TE.TaskEither<OAuthError | StoreError, OAuthClient> => {
    const problem = checkClientMetadata(input);
    if (problem !== null) return TE.left(problem);
    const client: OAuthClient = {
      id: deps.ids.next('ocl'),
      name: input.clientName?.trim() ?? 'Unnamed client',
      redirectUris: [...new Set(input.redirectUris)],
      kind: 'registered',
      createdAt: deps.clock.now().toISOString(),
    };
    return pipe(
      tx.oauth.insertClient(client),
      TE.map(() => client),
    );
  };
