/** The error codes of RFC 6749 §4.1.2.1 / §5.2, RFC 7591 §3.2.2 and RFC 8707 §2 this server answers. */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'unsupported_response_type'
  | 'invalid_scope'
  | 'invalid_target'
  | 'access_denied'
  | 'invalid_redirect_uri'
  | 'invalid_client_metadata'
  | 'server_error';

/**
 * An OAuth error, answered as `{ error, error_description }` (the one exception to problem+json). The
 * `error_description` is for developers; it never says more than the client may know.
 */
export interface OAuthError {
  readonly _tag: 'OAuthError';
  readonly error: OAuthErrorCode;
  readonly description: string;
}

export const oauthError = (error: OAuthErrorCode, description: string): OAuthError => ({ _tag: 'OAuthError', error, description });
