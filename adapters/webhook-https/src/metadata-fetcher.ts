import { request as httpsRequest } from 'node:https';
import { createSecureContext, rootCertificates } from 'node:tls';
import type { ClientMetadataFetcher } from '@esig/core';
import type { HttpsWebhookSenderOptions } from './sender.js';
import { makeTargetCheck, pinnedLookup } from './sender.js';
import { describeError } from './transport-errors.js';

export interface ClientMetadataFetcherOptions extends Pick<HttpsWebhookSenderOptions, 'allowHosts' | 'resolve' | 'resolutionCacheMs' | 'monotonicNow' | 'extraCa' | 'userAgent' | 'log'> {
  /** Largest document accepted (default 5 KiB, as the Client ID Metadata Document draft suggests). */
  readonly maxBytes?: number;
  /** Whole-exchange timeout (default 5 s). */
  readonly timeoutMs?: number;
  /** How long a fetched document is reused (default 5 min); failures are not cached. */
  readonly cacheMs?: number;
  /** Documents kept at most (default 1,000; the oldest goes first). */
  readonly cacheEntries?: number;
  readonly now?: () => number;
}

type Result = { readonly ok: true; readonly json: unknown } | { readonly ok: false; readonly reason: string };

/**
 * Fetches OAuth Client ID Metadata Documents with the webhook sender's outbound rules: https only, every
 * resolved address public (unless allowed), the connection pinned to the checked address, the certificate
 * verified, no redirects; plus a size limit, a timeout and a small cache. A failure's `reason` (which the
 * client is shown) says what is wrong with the URL or the document; a failed exchange — refused, reset,
 * timed out, a certificate not trusted — has one text whatever happened, as anyone may name any URL here and
 * must not learn this server's view of the network from it; what happened goes to `log`.
 */
export const createClientMetadataFetcher = (opts: ClientMetadataFetcherOptions = {}): ClientMetadataFetcher => {
  const check = makeTargetCheck(opts);
  const maxBytes = opts.maxBytes ?? 5 * 1024;
  const timeoutMs = opts.timeoutMs ?? 5000;
  const cacheMs = opts.cacheMs ?? 5 * 60_000;
  const cacheEntries = opts.cacheEntries ?? 1000;
  const now = opts.now ?? Date.now;
  const cache = new Map<string, { readonly at: number; readonly json: unknown }>();
  const secureContext =
    opts.extraCa === undefined ? undefined : createSecureContext({ ca: [...rootCertificates, typeof opts.extraCa === 'string' ? opts.extraCa : opts.extraCa.toString('utf8')] });

  const noAnswer = `no HTTPS answer came from its host (it must accept the connection, present a certificate trusted for its name and answer within ${timeoutMs} ms)`;

  const get = async (url: string): Promise<Result> => {
    const target = await check(url);
    if (!target.ok) {
      if (target.detail !== target.reason) opts.log?.({ url: url.slice(0, 300), error: target.error, detail: target.detail }, 'client metadata document URL refused');
      return { ok: false, reason: target.reason };
    }
    return new Promise<Result>((settle) => {
      let done = false;
      const finish = (r: Result) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        settle(r);
      };
      // Only the first failure is the story: destroying the request after it raises another.
      const unreachable = (detail: string) => {
        if (done) return;
        opts.log?.({ url: url.slice(0, 300), detail }, 'client metadata document not fetched');
        finish({ ok: false, reason: noAnswer });
      };
      const req = httpsRequest({
        method: 'GET',
        host: target.host,
        port: target.port,
        path: target.path,
        headers: { Accept: 'application/json', 'User-Agent': opts.userAgent ?? 'esig-oauth/1.0' },
        ...(target.literal ? {} : { servername: target.host }),
        lookup: pinnedLookup(target.addresses),
        agent: false,
        rejectUnauthorized: true,
        ...(secureContext === undefined ? {} : { secureContext }),
      });
      const timer = setTimeout(() => {
        unreachable(`no complete answer within ${timeoutMs} ms`);
        req.destroy();
      }, timeoutMs);
      req.on('error', (e) => unreachable(describeError(e)));
      req.on('response', (res) => {
        if (res.statusCode !== 200) {
          finish({ ok: false, reason: `answered ${res.statusCode ?? 0}` });
          return void req.destroy();
        }
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > maxBytes) {
            finish({ ok: false, reason: `larger than ${maxBytes} bytes` });
            return void req.destroy();
          }
          chunks.push(chunk);
        });
        res.on('end', () => {
          try {
            finish({ ok: true, json: JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown });
          } catch {
            finish({ ok: false, reason: 'not JSON' });
          }
        });
        res.on('error', (e) => unreachable(describeError(e)));
      });
      req.end();
    });
  };

  return {
    fetch: (url) => async () => {
      const hit = cache.get(url);
      if (hit !== undefined && now() - hit.at < cacheMs) return { ok: true, json: hit.json };
      const r = await get(url);
      if (r.ok) {
        cache.delete(url);
        cache.set(url, { at: now(), json: r.json });
        if (cache.size > cacheEntries) cache.delete(cache.keys().next().value!);
      }
      return r;
    },
  };
};
