import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as E from 'fp-ts/lib/Either.js';
import type express from 'express';
import type { Request, Response } from 'express';
import type { EmbedSession } from '@esig/core';
import { openEmbeddedSession } from '@esig/core';
import type { EsigHttpDeps } from './deps.js';
import { setRoutePattern } from './log-path.js';
import { sendProblem } from './send.js';

/**
 * The policy of the embedded page: the signing page's own, except that exactly the bound origin may frame
 * it (CONTRACT: "Embedded signing"). The origin was validated as a serialized origin when the session was
 * made, so it holds no space, quote or semicolon that could add a directive.
 */
export const embedPageCsp = (origin: string): string =>
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; worker-src 'self' blob:; " +
  `connect-src 'self'; frame-ancestors ${origin}; base-uri 'none'; form-action 'self'`;

/** For pages that belong to no origin (an unknown session): never framed. */
const NOT_FRAMED_CSP = "default-src 'none'; style-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

const pageDir = fileURLToPath(new URL('./signing-page/', import.meta.url));

/** JSON that can sit inside a `<script type="application/json">` element: no `<` to end it early. */
const scriptJson = (value: unknown): string => JSON.stringify(value).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');

const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);

/** The frame's configuration, read (and removed from the DOM) by the page's script: see `embed-frame.js`. */
interface FrameConfig {
  readonly origin: string;
  readonly requestId: string;
  readonly recipientId: string;
  /** The signer credential (a signing-link token of this recipient), held in memory only. */
  readonly credential?: string;
  /** For a used or expired session: the `error` to tell the host. */
  readonly error?: { readonly code: 'session_used' | 'session_expired'; readonly message: string };
}

const configOf = (s: EmbedSession, extra: Pick<FrameConfig, 'credential' | 'error'>): FrameConfig => ({
  origin: s.origin,
  requestId: s.requestId,
  recipientId: s.recipientId,
  ...extra,
});

const configTag = (c: FrameConfig) => `<script type="application/json" id="esig-embed">${scriptJson(c)}</script>`;

/** A small readable page (410, 404): a heading, a paragraph, and optionally the frame's script to tell the host. */
const simplePage = (title: string, text: string, config: FrameConfig | null) => `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <meta name="referrer" content="no-referrer">
  <meta name="robots" content="noindex, nofollow">
  <title>${escapeHtml(title)}</title>
  <link rel="stylesheet" href="/sign/assets/style.css">
  ${config ? `${configTag(config)}\n  <script type="module" src="/sign/assets/embed-gone.js"></script>` : ''}
</head>
<body>
  <main id="main" class="wrap">
    <section class="card message">
      <h1>${escapeHtml(title)}</h1>
      <p>${escapeHtml(text)}</p>
    </section>
  </main>
</body>
</html>
`;

const GONE: Readonly<Record<'Used' | 'Expired', { code: 'session_used' | 'session_expired'; title: string; text: string }>> = {
  Used: {
    code: 'session_used',
    title: 'This signing session was already used',
    text: 'An embedded signing session opens once. Go back to the page you came from and start signing again there.',
  },
  Expired: {
    code: 'session_expired',
    title: 'This signing session has expired',
    text: 'An embedded signing session must be opened within a few minutes. Go back to the page you came from and start signing again there.',
  },
};

const pageHeaders = (res: Response, csp: string) => {
  res.setHeader('Content-Security-Policy', csp);
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Cache-Control', 'no-store');
  // No X-Frame-Options: it cannot name an origin, and `frame-ancestors` decides.
  res.removeHeader('X-Frame-Options');
};

/** Where the IIFE build of @esig/embed lies, or null when that package is not built. */
const embedScriptFile = (): string | null => {
  try {
    const file = createRequire(import.meta.url).resolve('@esig/embed/iife');
    return existsSync(file) ? file : null;
  } catch {
    return null;
  }
};

/**
 * Embedded signing's browser side: `GET /embed/:token`, the signing page inside a third party's page, and
 * `GET /embed.js`, the @esig/embed client for host pages. Mount before the API's not-found handler.
 *
 * The first load consumes the session and serves the signing page with a fresh signer credential in it; the
 * page's script takes the credential into memory and removes it from the DOM, so the frame needs no cookie
 * and a reload finds the session used (410).
 */
export const mountEmbedPage = (app: express.Express, deps: Pick<EsigHttpDeps, 'uow' | 'clock' | 'crypto' | 'logger'>): void => {
  const shell = readFileSync(join(pageDir, 'index.html'), 'utf8');
  const open = openEmbeddedSession(deps);

  // Only a real load consumes a session: a HEAD (a link checker, a preview) must not use it up.
  app.head('/embed/:token', (_req: Request, res: Response) => {
    setRoutePattern(res, '/embed/{token}');
    res.setHeader('Allow', 'GET');
    res.status(405).end();
  });

  app.get('/embed/:token', async (req: Request, res: Response) => {
    setRoutePattern(res, '/embed/{token}');
    const token = req.params.token;
    const r = await open(typeof token === 'string' ? token : '')();
    if (E.isLeft(r)) {
      if (r.left._tag !== 'NotFound') return sendProblem(res, r.left);
      pageHeaders(res, NOT_FRAMED_CSP);
      return res
        .status(404)
        .type('text/html; charset=utf-8')
        .send(simplePage('This signing session does not exist', 'Check that the whole address was used, or start signing again from the page you came from.', null));
    }
    const o = r.right;
    pageHeaders(res, embedPageCsp(o.session.origin));
    if (o._tag === 'Opened') {
      const html = shell.replace('</head>', `  ${configTag(configOf(o.session, { credential: o.credential }))}\n</head>`);
      return res.status(200).type('text/html; charset=utf-8').send(html);
    }
    const gone = GONE[o._tag];
    res
      .status(410)
      .type('text/html; charset=utf-8')
      .send(simplePage(gone.title, gone.text, configOf(o.session, { error: { code: gone.code, message: gone.title } })));
  });

  // The client script for host pages: cacheable, versioned by its content (`ETag`, and `?v=<etag>` for
  // an immutable URL). Any site may load it, so it says so (CORS, CORP).
  let script: { body: Buffer; etag: string } | null | undefined;
  app.get('/embed.js', (req: Request, res: Response) => {
    setRoutePattern(res, '/embed.js');
    if (script === undefined) {
      const file = embedScriptFile();
      script = file === null ? null : (() => {
        const body = readFileSync(file);
        return { body, etag: createHash('sha256').update(body).digest('hex').slice(0, 16) };
      })();
      if (script === null) deps.logger.warn({}, '@esig/embed is not built: GET /embed.js answers 404 (npm run build -w @esig/embed)');
    }
    if (script === null) return sendProblem(res, { _tag: 'RouteNotFound' });
    const versioned = req.query.v === script.etag;
    res.setHeader('ETag', `"${script.etag}"`);
    res.setHeader('Cache-Control', versioned ? 'public, max-age=31536000, immutable' : 'public, max-age=300');
    res.setHeader('Access-Control-Allow-Origin', '*');
    res.setHeader('Cross-Origin-Resource-Policy', 'cross-origin');
    res.setHeader('X-Embed-Version', script.etag);
    if (req.headers['if-none-match'] === `"${script.etag}"`) return res.status(304).end();
    res.status(200).type('text/javascript; charset=utf-8').send(script.body);
  });
};
