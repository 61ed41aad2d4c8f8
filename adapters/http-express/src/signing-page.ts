import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type express from 'express';
import type { Response } from 'express';

/** The page's own policy: nothing from elsewhere, no inline script or style, never framed. */
export const SIGNING_PAGE_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; worker-src 'self' blob:; " +
  "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

const pageDir = fileURLToPath(new URL('./signing-page/', import.meta.url));
const pdfjsDir = join(dirname(createRequire(import.meta.url).resolve('pdfjs-dist/package.json')), 'build');

interface Asset {
  readonly file: string;
  readonly type: string;
}

/** Every file the page may load, by its path under /sign/assets/ (nothing else is served from there). */
const ASSETS: Readonly<Record<string, Asset>> = {
  'app.js': { file: join(pageDir, 'app.js'), type: 'text/javascript; charset=utf-8' },
  'embed-frame.js': { file: join(pageDir, 'embed-frame.js'), type: 'text/javascript; charset=utf-8' },
  'embed-gone.js': { file: join(pageDir, 'embed-gone.js'), type: 'text/javascript; charset=utf-8' },
  'style.css': { file: join(pageDir, 'style.css'), type: 'text/css; charset=utf-8' },
  'favicon.svg': { file: join(pageDir, 'favicon.svg'), type: 'image/svg+xml' },
  'pdfjs/pdf.min.mjs': { file: join(pdfjsDir, 'pdf.min.mjs'), type: 'text/javascript; charset=utf-8' },
  'pdfjs/pdf.worker.min.mjs': { file: join(pdfjsDir, 'pdf.worker.min.mjs'), type: 'text/javascript; charset=utf-8' },
};

const securityHeaders = (res: Response) => {
  res.setHeader('Content-Security-Policy', SIGNING_PAGE_CSP);
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('X-Content-Type-Options', 'nosniff');
};

/**
 * The recipient's signing page: `GET /sign/:token` is the same HTML shell for any token (the page reads the
 * token from its URL and calls the signer API), `GET /sign/assets/…` its script, style and pdf.js.
 * Mount it before the API's not-found handler.
 */
export const mountSigningPage = (app: express.Express): void => {
  const html = readFileSync(join(pageDir, 'index.html'));
  const assets = new Map(
    Object.entries(ASSETS).map(([path, a]) => {
      const body = readFileSync(a.file);
      return [path, { type: a.type, body, etag: `"${createHash('sha256').update(body).digest('hex').slice(0, 16)}"` }];
    }),
  );

  // Checked at every use (`no-cache`, answered 304 while unchanged): a page must never run a script of an
  // older release against this release's API, which a cached copy would do for as long as it was kept.
  for (const [path, asset] of assets) {
    app.get(`/sign/assets/${path}`, (req, res) => {
      securityHeaders(res);
      res.setHeader('Cache-Control', 'public, no-cache');
      res.setHeader('ETag', asset.etag);
      if (req.headers['if-none-match'] === asset.etag) return res.status(304).end();
      res.status(200).type(asset.type).send(asset.body);
    });
  }

  app.get('/sign/:token', (_req, res) => {
    res.locals.routePattern = '/sign/{token}';
    securityHeaders(res);
    res.setHeader('Cache-Control', 'no-store');
    res.status(200).type('text/html; charset=utf-8').send(html);
  });
};
