import * as E from 'fp-ts/lib/Either.js';
import express from 'express';
import type { Request, Response } from 'express';
import type { AuthorizationParams, ClientMetadataFetcher, OAuthClient, OAuthError, StoreError, ValidAuthorizationRequest } from '@esig/core';
import {
  OAUTH_SCOPES,
  authenticate,
  checkAuthorizationRequest,
  exchangeAuthorizationCode,
  issueAuthorizationCode,
  oauthError,
  refreshAccessToken,
  registerOAuthClient,
  resolveOAuthClient,
  revokeOAuthToken,
  urlHost,
} from '@esig/core';
import type { EsigHttpDeps } from './deps.js';
import { noteFault } from './send.js';
import { declaredOver } from './body-length.js';

/** The tool server's path and the paths of the authorization server's endpoints. */
export const MCP_PATH = '/mcp';
export const PROTECTED_RESOURCE_METADATA_PATH = '/.well-known/oauth-protected-resource/mcp';

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** The OAuth error body of RFC 6749 §5.2 (the one exception to problem+json). */
const sendOAuthError = (res: Response, e: OAuthError | StoreError) => {
  if (e._tag !== 'OAuthError') {
    if (e._tag === 'StoreFailure') noteFault(res, e.cause);
    return res.status(500).json({ error: 'server_error', error_description: 'The server could not complete the request.' });
  }
  const status = e.error === 'invalid_client' ? 401 : 400;
  res.status(status).json({ error: e.error, error_description: e.description });
};

/** Lets browser-based clients (the MCP Inspector, web apps) call the endpoints that carry no ambient credential. */
const cors = (req: Request, res: Response, next: express.NextFunction) => {
  res.setHeader('Access-Control-Allow-Origin', '*');
  res.setHeader('Access-Control-Allow-Headers', 'Content-Type, Authorization, MCP-Protocol-Version');
  res.setHeader('Access-Control-Allow-Methods', 'GET, POST, OPTIONS');
  if (req.method === 'OPTIONS') return void res.status(204).end();
  next();
};

const withQuery = (uri: string, params: Record<string, string | undefined>) => {
  const u = new URL(uri);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) u.searchParams.set(k, v);
  return u.toString();
};

const SCOPE_TEXT: Readonly<Record<string, string>> = {
  'documents:read': 'Read your documents',
  'documents:write': 'Upload documents',
  'signature_requests:read': 'Read signature requests and their evidence',
  'signature_requests:write': 'Create, send, cancel and remind signature requests',
  'webhooks:read': 'Read webhook endpoints and deliveries',
  'webhooks:write': 'Change webhook endpoints',
  'logs:read': 'Read the API request log',
};

/**
 * The consent page: names the client, the host its code goes to and the scopes asked for; the org's
 * administrator signs in by pasting an API key. No script; the form carries the original parameters.
 */
const consentPage = (q: ValidAuthorizationRequest, params: Record<string, string | undefined>, problem: string | null) => {
  const scopes = q.requestedScopes.length === 0 ? OAUTH_SCOPES : q.requestedScopes;
  const hidden = Object.entries(params)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `<input type="hidden" name="${esc(k)}" value="${esc(v!)}">`)
    .join('\n      ');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Authorize ${esc(q.client.name)} — esig</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:34rem;margin:3rem auto;padding:0 1rem;color:#1b1b1f}
code{background:#f2f2f5;padding:0 .25rem;border-radius:3px}.err{color:#a40000}
input[type=password]{width:100%;padding:.5rem;font:inherit;box-sizing:border-box}button{font:inherit;padding:.5rem 1rem;margin-right:.5rem}</style>
</head><body>
<h1>Authorize <q>${esc(q.client.name)}</q>?</h1>
<p><strong>${esc(q.client.name)}</strong> (client <code>${esc(q.client.id)}</code>) asks to use esig on your organization's behalf.
After you allow it, you are sent to <strong>${esc(urlHost(q.redirectUri))}</strong>.</p>
<p>It asks for:</p>
<ul>${scopes.map((s) => `<li><code>${esc(s)}</code> — ${esc(SCOPE_TEXT[s] ?? 'unknown scope (ignored)')}</li>`).join('')}</ul>
<p>It gets only the scopes your API key holds, on your key's organization and mode (test or live), never the right to create API keys.
Revoking the key revokes this access.</p>
${problem === null ? '' : `<p class="err" role="alert">${esc(problem)}</p>`}
<form method="post" action="/oauth/authorize">
      ${hidden}
  <label for="api_key">An API key of your organization</label>
  <input id="api_key" name="api_key" type="password" autocomplete="off" required placeholder="esig_test_…">
  <p><button type="submit" name="decision" value="allow">Allow</button>
  <button type="submit" name="decision" value="deny" formnovalidate>Deny</button></p>
</form>
</body></html>`;
};

const errorPage = (message: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Authorization failed — esig</title></head><body><h1>This authorization request cannot be completed</h1><p>${esc(message)}</p></body></html>`;

/**
 * The OAuth 2.1 authorization server of the tool-protocol server (issuer = the public URL): metadata
 * documents (RFC 9728, RFC 8414), dynamic registration (RFC 7591), the consent page, the token endpoint
 * (authorization_code with PKCE S256, refresh_token with rotation) and revocation (RFC 7009).
 */
/** The largest body of an OAuth call (a registration's metadata, a form). */
const OAUTH_BODY_LIMIT = 64 * 1024;

/**
 * The authorization server's identifier and endpoints under a public URL: what its metadata (RFC 8414) names, and the
 * OpenAPI document's oauth2 scheme with it.
 */
export const oauthEndpoints = (publicUrl: string) => {
  const issuer = publicUrl.replace(/\/+$/, '');
  return { issuer, authorization: `${issuer}/oauth/authorize`, token: `${issuer}/oauth/token`, registration: `${issuer}/oauth/register`, revocation: `${issuer}/oauth/revoke` };
};

export const createOAuthRouter = (deps: EsigHttpDeps & { readonly clientMetadata: ClientMetadataFetcher }, publicUrl: string): express.Router => {
  const router = express.Router();
  const endpoints = oauthEndpoints(publicUrl);
  const { issuer } = endpoints;
  const resource = `${issuer}${MCP_PATH}`;
  const publicOrigin = new URL(issuer).origin;
  const resolve = resolveOAuthClient({ stores: deps.stores, metadata: deps.clientMetadata, clock: deps.clock });
  const keyAuth = authenticate(deps);
  const form = express.urlencoded({ extended: false, limit: OAUTH_BODY_LIMIT });
  const json = express.json({ limit: OAUTH_BODY_LIMIT });
  // A body declared over the limit is refused from its headers, unread (as the parsers' own 413, below). Only the
  // POSTs read a body: a GET of a path this router does not serve goes on to its 404 whatever it declares.
  router.use((req, res, next) => {
    if (req.method !== 'POST' || !declaredOver(req, OAUTH_BODY_LIMIT)) return next();
    res.setHeader('Connection', 'close');
    next(Object.assign(new Error('request entity too large'), { type: 'entity.too.large' }));
  });

  router.get(PROTECTED_RESOURCE_METADATA_PATH, cors, (_req, res) =>
    void res.json({ resource, authorization_servers: [issuer], scopes_supported: OAUTH_SCOPES, bearer_methods_supported: ['header'], resource_name: 'esig' }),
  );
  router.options(PROTECTED_RESOURCE_METADATA_PATH, cors);
  router.get('/.well-known/oauth-authorization-server', cors, (_req, res) =>
    void res.json({
      issuer,
      authorization_endpoint: endpoints.authorization,
      token_endpoint: endpoints.token,
      registration_endpoint: endpoints.registration,
      revocation_endpoint: endpoints.revocation,
      response_types_supported: ['code'],
      response_modes_supported: ['query'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['none'],
      revocation_endpoint_auth_methods_supported: ['none'],
      scopes_supported: OAUTH_SCOPES,
      client_id_metadata_document_supported: true,
      authorization_response_iss_parameter_supported: true,
    }),
  );
  router.options('/.well-known/oauth-authorization-server', cors);

  router.all('/oauth/register', cors, json, async (req, res) => {
    if (req.method !== 'POST') return void res.status(405).json({ error: 'invalid_request', error_description: 'Use POST.' });
    const body = (typeof req.body === 'object' && req.body !== null ? req.body : {}) as Record<string, unknown>;
    const uris = body.redirect_uris;
    if (!Array.isArray(uris) || !uris.every((u) => typeof u === 'string'))
      return sendOAuthError(res, oauthError('invalid_redirect_uri', 'redirect_uris must be an array of URIs.'));
    const method = body.token_endpoint_auth_method;
    if (method !== undefined && method !== 'none') return sendOAuthError(res, oauthError('invalid_client_metadata', 'Only public clients are supported: token_endpoint_auth_method must be "none".'));
    if (body.client_name !== undefined && typeof body.client_name !== 'string') return sendOAuthError(res, oauthError('invalid_client_metadata', 'client_name must be a string.'));
    const r = await deps.uow.transaction(registerOAuthClient(deps)({ clientName: str(body.client_name), redirectUris: uris as string[] }))();
    if (E.isLeft(r)) return sendOAuthError(res, r.left);
    const c = r.right;
    res.status(201).json({
      client_id: c.id,
      client_id_issued_at: Math.floor(Date.parse(c.createdAt) / 1000),
      client_name: c.name,
      redirect_uris: c.redirectUris,
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    });
  });

  const authParams = (src: Record<string, unknown>): AuthorizationParams & { clientId: string | undefined } => ({
    clientId: str(src.client_id),
    responseType: str(src.response_type),
    redirectUri: str(src.redirect_uri),
    codeChallenge: str(src.code_challenge),
    codeChallengeMethod: str(src.code_challenge_method),
    resource: str(src.resource),
    scope: str(src.scope),
    state: str(src.state),
  });

  /** Checks the request; on a refusal answers it (error page, or redirect with the error) and returns null. */
  const checked = async (res: Response, src: Record<string, unknown>): Promise<{ request: ValidAuthorizationRequest; client: OAuthClient } | null> => {
    const p = authParams(src);
    if (p.clientId === undefined) return void res.status(400).type('html').send(errorPage('The client_id is missing.')), null;
    const client = await resolve(p.clientId)();
    if (E.isLeft(client)) {
      deps.logger.warn({ clientId: p.clientId.slice(0, 200), error: client.left._tag === 'OAuthError' ? client.left.description : client.left._tag }, 'oauth client refused');
      return void res.status(400).type('html').send(errorPage(client.left._tag === 'OAuthError' ? client.left.description : 'The client could not be checked.')), null;
    }
    const c = checkAuthorizationRequest(client.right, p, resource);
    if (!c.ok) {
      if (c.redirect === null) return void res.status(400).type('html').send(errorPage(c.error.description)), null;
      return void res.redirect(302, withQuery(c.redirect, { error: c.error.error, error_description: c.error.description, state: c.state, iss: issuer })), null;
    }
    return { request: c.request, client: client.right };
  };

  const pageHeaders = (res: Response, redirectUri: string) => {
    // The form posts here and is then redirected to the client: form-action must allow both (browsers check redirects too).
    res.setHeader('Content-Security-Policy', `default-src 'none'; style-src 'unsafe-inline'; form-action 'self' ${new URL(redirectUri).origin}; frame-ancestors 'none'; base-uri 'none'`);
    res.setHeader('X-Frame-Options', 'DENY');
    res.setHeader('Referrer-Policy', 'no-referrer');
    res.type('html');
  };

  const ORIGINAL = ['client_id', 'response_type', 'redirect_uri', 'code_challenge', 'code_challenge_method', 'resource', 'scope', 'state'] as const;
  const original = (src: Record<string, unknown>) => Object.fromEntries(ORIGINAL.map((k) => [k, str(src[k])]));

  router.get('/oauth/authorize', async (req, res) => {
    const q = req.query as Record<string, unknown>;
    const ok = await checked(res, q);
    if (ok === null) return;
    pageHeaders(res, ok.request.redirectUri);
    res.send(consentPage(ok.request, original(q), null));
  });

  router.post('/oauth/authorize', form, async (req, res) => {
    // CSRF: the credential is the pasted key in the body, never ambient (no cookie); a cross-site form is refused too.
    const origin = req.get('origin');
    if ((origin !== undefined && origin !== 'null' && origin !== publicOrigin) || req.get('sec-fetch-site') === 'cross-site')
      return void res.status(403).type('html').send(errorPage('This form may only be sent from the consent page itself.'));
    const body = (req.body ?? {}) as Record<string, unknown>;
    const ok = await checked(res, body);
    if (ok === null) return;
    const { request } = ok;
    const back = (params: Record<string, string | undefined>) => res.redirect(302, withQuery(request.redirectUri, { ...params, state: request.state, iss: issuer }));
    if (body.decision !== 'allow') return back({ error: 'access_denied', error_description: 'The administrator denied the request.' });
    const key = str(body.api_key)?.trim() ?? '';
    const principal = key.startsWith('esig_oat_') ? null : await keyAuth(key)();
    if (principal === null || E.isLeft(principal)) {
      pageHeaders(res, request.redirectUri);
      return void res.status(401).send(consentPage(request, original(body), 'That API key is unknown or revoked. Paste an API key of your organization.'));
    }
    const issued = await deps.uow.transaction(issueAuthorizationCode(deps)(principal.right, request))();
    if (E.isLeft(issued)) {
      if (issued.left._tag === 'OAuthError') return back({ error: issued.left.error, error_description: issued.left.description });
      if (issued.left._tag === 'StoreFailure') noteFault(res, issued.left.cause);
      return back({ error: 'server_error' });
    }
    back({ code: issued.right.code });
  });

  router.all('/oauth/token', cors, form, json, async (req, res) => {
    res.setHeader('Cache-Control', 'no-store');
    if (req.method !== 'POST') return void res.status(405).json({ error: 'invalid_request', error_description: 'Use POST.' });
    const body = (typeof req.body === 'object' && req.body !== null ? req.body : {}) as Record<string, unknown>;
    const clientId = str(body.client_id);
    if (clientId === undefined) return sendOAuthError(res, oauthError('invalid_client', 'client_id is required (public clients authenticate with PKCE).'));
    const grantType = str(body.grant_type);
    if (grantType !== 'authorization_code' && grantType !== 'refresh_token')
      return sendOAuthError(res, oauthError('unsupported_grant_type', 'grant_type must be authorization_code or refresh_token.'));
    const client = await resolve(clientId)();
    if (E.isLeft(client)) return sendOAuthError(res, client.left);
    const r =
      grantType === 'authorization_code'
        ? await exchangeAuthorizationCode(deps)({
            client: client.right,
            code: str(body.code) ?? '',
            codeVerifier: str(body.code_verifier),
            redirectUri: str(body.redirect_uri),
            resource: str(body.resource),
          })()
        : await refreshAccessToken(deps)({ client: client.right, refreshToken: str(body.refresh_token) ?? '', resource: str(body.resource) })();
    if (E.isLeft(r)) return sendOAuthError(res, r.left);
    res.json(r.right);
  });

  router.all('/oauth/revoke', cors, form, json, async (req, res) => {
    if (req.method !== 'POST') return void res.status(405).json({ error: 'invalid_request', error_description: 'Use POST.' });
    const body = (typeof req.body === 'object' && req.body !== null ? req.body : {}) as Record<string, unknown>;
    const token = str(body.token);
    if (token === undefined) return sendOAuthError(res, oauthError('invalid_request', 'token is required.'));
    const r = await deps.uow.transaction(revokeOAuthToken(deps)({ token, clientId: str(body.client_id) }))();
    if (E.isLeft(r)) return sendOAuthError(res, r.left);
    res.status(200).end();
  });

  // The body parsers' faults, answered as the OAuth endpoints answer every error (RFC 6749 §5.2, RFC 7591 §3.2.2)
  // rather than as the API's problem+json; anything else goes on to the app's handler.
  router.use((err: unknown, req: Request, res: Response, next: express.NextFunction) => {
    const type = (err as { type?: unknown }).type;
    if (type !== 'entity.parse.failed' && type !== 'entity.too.large' && type !== 'encoding.unsupported' && type !== 'charset.unsupported') return next(err);
    res.setHeader('Access-Control-Allow-Origin', '*');
    const error = /^\/oauth\/register$/i.test(req.path) ? 'invalid_client_metadata' : 'invalid_request';
    const description =
      type === 'entity.too.large' ? 'The body is larger than 64 KiB.' : type === 'entity.parse.failed' ? 'The body is not a JSON object or a form.' : 'The body must be UTF-8.';
    res.status(type === 'entity.too.large' ? 413 : 400).json({ error, error_description: description });
  });
  return router;
};
