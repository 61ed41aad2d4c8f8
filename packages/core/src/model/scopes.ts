/** The permissions an API key can carry (CONTRACT.md, "Keys, scopes, modes"). `*` grants all of them. */
export const API_SCOPES = [
  'documents:read',
  'documents:write',
  'signature_requests:read',
  'signature_requests:write',
  'webhooks:read',
  'webhooks:write',
  'api_keys:write',
  'logs:read',
] as const;

export type ApiScope = (typeof API_SCOPES)[number];
export type GrantedScope = ApiScope | '*';

export const isApiScope = (s: string): s is ApiScope => (API_SCOPES as readonly string[]).includes(s);

/** True when the granted set covers `needed`. */
export const hasScope = (granted: readonly GrantedScope[], needed: ApiScope): boolean =>
  granted.includes('*') || granted.includes(needed);

/** The scopes of `requested` that `granted` does not cover (empty when a key may hand them on). */
export const scopesNotCovered = (
  granted: readonly GrantedScope[],
  requested: readonly GrantedScope[],
): GrantedScope[] =>
  granted.includes('*') ? [] : requested.filter((s) => s === '*' || !granted.includes(s));
