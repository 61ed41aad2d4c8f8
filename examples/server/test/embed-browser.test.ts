import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext, Frame, Page, Response } from 'playwright-core';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from './harness.js';
import { startTestServer } from './harness.js';

// What page.evaluate callbacks see in the browser (this project compiles without the DOM's types).
declare const window: any;
declare const document: any;

// Embedded signing in real Chromium, across two sites: host pages on http://localhost:<port> (two of them,
// origins A and B), the esig server on http://127.0.0.1:<port>. Third-party cookies are blocked in this
// browser, as Safari and Chrome's phase-out do; the frame needs none.

let s: TestServer;
let browser: Browser;
let hostA: { server: Server; origin: string };
let hostB: { server: Server; origin: string };

const EVENT_TYPES = ['ready', 'request.viewed', 'signer.authenticated', 'signer.signed', 'request.declined', 'request.completed', 'error', 'resize'];

/** A host page: loads /embed.js from esig and mounts `?url=` into #sign, recording every event in `window.events`. */
const hostPage = (esigUrl: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Host app</title>
<style>body{margin:0;font-family:system-ui,sans-serif;background:#eef}header{padding:8px 16px;background:#224;color:#fff}#sign{height:calc(100vh - 48px)}</style>
</head><body><header>Acme CRM — contract for Ada</header><div id="sign"></div>
<script src="${esigUrl}/embed.js"></script>
<script>
  const q = new URLSearchParams(location.search);
  window.events = [];
  // Everything that reaches this window, genuine or not, to show that forged messages did arrive.
  window.raw = [];
  addEventListener('message', (e) => window.raw.push({ origin: e.origin, type: e.data && e.data.type }));
  window.signing = EsigEmbed.mount(document.getElementById('sign'), { url: q.get('url'), timeoutMs: Number(q.get('timeout') || 30000) });
  for (const t of ${JSON.stringify(EVENT_TYPES)}) window.signing.on(t, (m) => window.events.push(m));
</script></body></html>`;

/** A page that tries to pass for the frame (to the host) and for the host (to the frame). */
const forgerPage = `<!doctype html><html><body><script>
  const fake = { esig: 1, requestId: 'req_forged', recipientId: 'rcp_forged', at: new Date().toISOString() };
  parent.postMessage({ ...fake, type: 'signer.signed' }, '*');
  parent.postMessage({ ...fake, type: 'request.completed' }, '*');
  // The esig frame is the host's first frame: ask it for "ready" as if we were the host.
  parent.frames[0].postMessage({ esig: 1, type: 'hello' }, '*');
  document.body.textContent = 'forged';
</script></body></html>`;

/** A host page with the custom element in its markup, upgraded when /embed.js loads; `esig:*` events recorded. */
const elementPage = (esigUrl: string, url: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Host app (element)</title></head><body>
<esig-signing url="${url.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)}" style="display:block;height:700px"></esig-signing>
<script src="${esigUrl}/embed.js"></script>
<script>
  window.events = [];
  for (const t of ${JSON.stringify(EVENT_TYPES)}) document.querySelector('esig-signing').addEventListener('esig:' + t, (e) => window.events.push(e.detail));
</script></body></html>`;

const startHost = async (esigUrl: string) => {
  const server = createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://host');
    res.setHeader('content-type', 'text/html; charset=utf-8');
    res.end(u.pathname === '/forger' ? forgerPage : u.pathname === '/element' ? elementPage(esigUrl, u.searchParams.get('url') ?? '') : hostPage(esigUrl));
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return { server, origin: `http://localhost:${(server.address() as AddressInfo).port}` };
};

beforeAll(async () => {
  s = await startTestServer({ ESIG_WORKER_POLL_MS: '50' });
  hostA = await startHost(s.url);
  hostB = await startHost(s.url);
  browser = await chromium.launch({
    executablePath: process.env.ESIG_CHROMIUM ?? '/usr/bin/chromium',
    args: [
      '--headless=new', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync',
      // Third-party cookies off, as in Safari and Chrome's phase-out.
      '--test-third-party-cookie-phaseout',
    ],
  });
});
afterAll(async () => {
  await browser?.close();
  for (const h of [hostA, hostB]) await new Promise((done) => h?.server.close(done));
  await s?.close();
});

interface Setup {
  readonly authentication?: 'access_code';
  readonly accessCode?: string;
}

/** A sent request for Ada with a text field and a signature field, and an embedded session for `origin`. */
const sessionFor = async (origin: string, o: Setup = {}, server: TestServer = s) => {
  const doc = await server.uploadPdf('embedded.pdf', 1);
  const req = (await server.call('POST', '/api/v1/signature-requests', { body: { title: 'Embedded NDA', documentIds: [doc.id] } })).body;
  const rcp = (
    await server.call('POST', `/api/v1/signature-requests/${req.id}/recipients`, {
      body: { email: 'ada@example.com', firstName: 'Ada', lastName: 'Lovelace', ...(o.authentication ? { authentication: o.authentication, accessCode: o.accessCode } : {}) },
    })
  ).body;
  for (const [type, y] of [['text', 200], ['signature', 500]] as const)
    await server.call('POST', `/api/v1/signature-requests/${req.id}/fields`, { body: { documentId: doc.id, recipientId: rcp.id, type, page: 1, x: 72, y, width: 200, height: 40 } });
  expect((await server.call('POST', `/api/v1/signature-requests/${req.id}/send`)).status).toBe(200);
  const ses = await server.call('POST', `/api/v1/signature-requests/${req.id}/recipients/${rcp.id}/embedded-sessions`, { body: { origin } });
  expect(ses.status).toBe(201);
  // ESIG_PUBLIC_URL names port 0 (the port is known only once listening): the browser goes to the real one.
  return { req, rcp, url: (ses.body.url as string).replace(/^https?:\/\/[^/]+/, server.url) };
};

interface Opened {
  readonly page: Page;
  readonly context: BrowserContext;
  readonly frameResponses: Response[];
  readonly errors: string[];
  events(): Promise<any[]>;
  waitForEvent(type: string, timeout?: number): Promise<any>;
  frame(): Promise<Frame>;
}

const openHost = async (host: { origin: string }, url: string, o: { timeoutMs?: number; width?: number; path?: string } = {}): Promise<Opened> => {
  const context = await browser.newContext({ viewport: { width: o.width ?? 1100, height: 900 } });
  const page = await context.newPage();
  const errors: string[] = [];
  const frameResponses: Response[] = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  if (process.env.EMBED_DEBUG) page.on('console', (m) => console.log('console:', m.type(), m.text(), m.location().url));
  if (process.env.EMBED_DEBUG) page.on('requestfailed', (r) => console.log('failed:', r.url(), r.failure()?.errorText));
  page.on('response', (r) => {
    if (r.url().includes('/embed/')) frameResponses.push(r);
  });
  await page.goto(`${host.origin}${o.path ?? '/'}?url=${encodeURIComponent(url)}&timeout=${o.timeoutMs ?? 30_000}`);
  const events = () => page.evaluate(() => (window as any).events as any[]);
  return {
    page,
    context,
    frameResponses,
    errors,
    events,
    waitForEvent: async (type, timeout = 20_000) => {
      const handle = await page.waitForFunction((t) => (window as any).events.find((e: any) => e.type === t), type, { timeout });
      return handle.jsonValue();
    },
    frame: async () => {
      const f = page.frames().find((x) => x.url().includes('/embed/'));
      if (!f) throw new Error('no embed frame');
      return f;
    },
  };
};

const typeAndSign = async (frame: Frame) => {
  await frame.locator('.page canvas').first().waitFor({ timeout: 20_000 });
  await frame.locator('.field-text input').fill('Countess of Lovelace');
  await frame.getByRole('button', { name: 'Sign', exact: true }).click();
  const dialog = frame.getByRole('dialog', { name: 'Your signature' });
  await dialog.getByLabel('Type your full name').fill('Ada Lovelace');
  await dialog.getByRole('button', { name: 'Adopt signature' }).click();
};

describe('embedded signing in Chromium (host on localhost, esig on 127.0.0.1, third-party cookies blocked)', () => {
  it('mounts, signs, and tells the host only what the server recorded; the API shows SIGNED', async () => {
    const { req, rcp, url } = await sessionFor(hostA.origin);
    const h = await openHost(hostA, url);
    const ready = await h.waitForEvent('ready');
    expect(ready).toMatchObject({ esig: 1, type: 'ready', requestId: req.id, recipientId: rcp.id, status: 'OPENED' });
    expect(Number.isNaN(Date.parse(ready.at))).toBe(false);

    // The frame's answer: framable by origin A only, no cookie, no referrer, never cached.
    const res = h.frameResponses.find((r) => r.url() === url)!;
    expect(res.status()).toBe(200);
    const headers = res.headers();
    expect(headers['content-security-policy']).toContain(`frame-ancestors ${hostA.origin};`);
    expect(headers['x-frame-options']).toBeUndefined();
    expect(headers['set-cookie']).toBeUndefined();
    expect(headers['referrer-policy']).toBe('no-referrer');
    expect(headers['cache-control']).toBe('no-store');

    const frame = await h.frame();
    // Third-party cookies are blocked here, and the frame has none and needs none.
    expect(await frame.evaluate(() => document.hasStorageAccess())).toBe(false);
    expect(await frame.evaluate(() => document.cookie)).toBe('');
    expect(await frame.evaluate(() => document.getElementById('esig-embed'))).toBeNull();

    await typeAndSign(frame);
    const signed = await h.waitForEvent('signer.signed');
    // The event follows the server's record: the API already shows the signature.
    const got = (await s.call('GET', `/api/v1/signature-requests/${req.id}`)).body;
    expect(got.recipients[0].status).toBe('SIGNED');
    expect(signed).toMatchObject({ requestId: req.id, recipientId: rcp.id });
    // request.completed comes once the finished document exists: the API shows COMPLETED and serves it.
    await h.waitForEvent('request.completed');
    expect((await s.call('GET', `/api/v1/signature-requests/${req.id}`)).body.status).toBe('COMPLETED');
    expect((await s.call('GET', `/api/v1/signature-requests/${req.id}/document`)).status).toBe(200);
    expect(await frame.locator('a', { hasText: 'Download the signed document' }).count()).toBe(1);
    const order = (await h.events()).map((e) => e.type).filter((t) => t !== 'resize');
    expect(order).toEqual(['ready', 'request.viewed', 'signer.signed', 'request.completed']);
    // The frame reports its height for hosts that size it to fit.
    expect((await h.events()).some((e) => e.type === 'resize' && e.height > 0)).toBe(true);
    expect(await h.context.cookies()).toEqual([]);

    // hello asks the frame for `ready` again, with the current status.
    await h.page.evaluate((origin) => (window as any).signing.iframe.contentWindow.postMessage({ esig: 1, type: 'hello' }, origin), new URL(s.url).origin);
    await h.page.waitForFunction(() => (window as any).events.filter((e: any) => e.type === 'ready').length === 2);
    expect((await h.events()).filter((e) => e.type === 'ready')[1].status).toBe('SIGNED');
    expect(h.errors).toEqual([]);
    await h.context.close();
  }, 90_000);

  it('a session bound to origin A, mounted on origin B: the browser refuses the frame and the client reports timeout', async () => {
    const { url } = await sessionFor(hostA.origin);
    const h = await openHost(hostB, url, { timeoutMs: 3000 });
    const e = await h.waitForEvent('error');
    expect(e).toMatchObject({ type: 'error', code: 'timeout', requestId: null });
    expect((await h.events()).some((x) => x.type === 'ready')).toBe(false);
    await h.context.close();
  }, 60_000);

  it('a consumed session shows a readable 410 and tells the host session_used', async () => {
    const { url } = await sessionFor(hostA.origin);
    const first = await openHost(hostA, url);
    await first.waitForEvent('ready');
    await first.context.close();

    const again = await openHost(hostA, url);
    const e = await again.waitForEvent('error');
    expect(e).toMatchObject({ code: 'session_used' });
    expect(again.frameResponses.find((r) => r.url() === url)!.status()).toBe(410);
    expect(await (await again.frame()).locator('h1').innerText()).toBe('This signing session was already used');
    await again.page.screenshot({ path: '/tmp/esig-embed-410.png' });
    await again.context.close();
  }, 60_000);

  it('an expired session tells the host session_expired', async () => {
    const short = await startTestServer({ ESIG_EMBED_SESSION_TTL_S: '1' });
    try {
      const { url } = await sessionFor(hostA.origin, {}, short);
      await new Promise((done) => setTimeout(done, 1100));
      const h = await openHost(hostA, url);
      expect(await h.waitForEvent('error')).toMatchObject({ code: 'session_expired' });
      expect(await (await h.frame()).locator('h1').innerText()).toBe('This signing session has expired');
      await h.context.close();
    } finally {
      await short.close();
    }
  }, 60_000);

  it('ignores forged messages: the client only hears its own frame from esig, the frame only hears its parent from the bound origin', async () => {
    const { url } = await sessionFor(hostA.origin);
    const h = await openHost(hostA, url);
    await h.waitForEvent('ready');
    // The frame counts the `hello`s that reach it, each once its own listener has answered or ignored it.
    const frame = await h.frame();
    await frame.evaluate(() => {
      window.hellosHeard = 0;
      window.addEventListener('message', (e: any) => {
        if (e.data && e.data.type === 'hello') window.hellosHeard++;
      });
    });
    // The host page's own window and same-origin and cross-origin sibling frames post look-alike messages.
    await h.page.evaluate(() => window.postMessage({ esig: 1, type: 'signer.signed', requestId: 'req_x', recipientId: 'rcp_x', at: '' }, '*'));
    for (const origin of [hostA.origin, hostB.origin])
      await h.page.evaluate(
        (src) =>
          new Promise<void>((done) => {
            const f = document.createElement('iframe');
            f.src = src;
            f.onload = () => done();
            document.body.appendChild(f);
          }),
        `${origin}/forger`,
      );
    // Every forged message has reached the host: its own window's, and each forger's two.
    await h.page.waitForFunction(([a, b]: string[]) => {
      const count = (origin: string, type: string) => (window.raw as { origin: string; type: string }[]).filter((m) => m.origin === origin && m.type === type).length;
      return count(a!, 'signer.signed') >= 2 && count(b!, 'signer.signed') >= 1 && count(a!, 'request.completed') >= 1 && count(b!, 'request.completed') >= 1;
    }, [hostA.origin, hostB.origin]);
    // Both forged hellos have reached the frame; a mark it posts to the host now arrives after anything it
    // posted before (a `ready` answering a forged hello), so once the mark is in, nothing more is on its way.
    await frame.waitForFunction(() => window.hellosHeard === 2);
    await frame.evaluate(() => window.parent.postMessage({ type: 'test.mark' }, '*'));
    await h.page.waitForFunction(() => (window.raw as { type: string }[]).some((m) => m.type === 'test.mark'));
    // They arrived (from the host's own window and from both sibling frames)…
    const raw = await h.page.evaluate(() => (window as any).raw as { origin: string; type: string }[]);
    const forgedFrom = new Set(raw.filter((m) => m.type === 'signer.signed').map((m) => m.origin));
    expect(forgedFrom).toEqual(new Set([hostA.origin, hostB.origin]));
    // …and the client emitted none of them, while the frame answered neither forged hello with `ready`.
    const types = (await h.events()).map((e) => e.type).filter((t) => t !== 'resize' && t !== 'request.viewed');
    expect(types).toEqual(['ready']);
    await h.context.close();
  }, 60_000);

  it('declines inside the frame: request.declined with the reason, and the API shows DECLINED', async () => {
    const { req, url } = await sessionFor(hostA.origin);
    const h = await openHost(hostA, url);
    await h.waitForEvent('ready');
    const frame = await h.frame();
    await frame.locator('.page canvas').first().waitFor({ timeout: 20_000 });
    await frame.getByRole('button', { name: 'Decline', exact: true }).click();
    const dialog = frame.getByRole('dialog', { name: 'Decline to sign' });
    await dialog.getByLabel('Reason for declining').fill('Wrong amount.');
    await dialog.getByRole('button', { name: 'Decline to sign' }).click();
    expect(await h.waitForEvent('request.declined')).toMatchObject({ reason: 'Wrong amount.' });
    expect((await s.call('GET', `/api/v1/signature-requests/${req.id}`)).body.status).toBe('DECLINED');
    await h.context.close();
  }, 60_000);

  it('asks for the access code inside the frame, then signs', async () => {
    const { req, url } = await sessionFor(hostA.origin, { authentication: 'access_code', accessCode: '4321' });
    const h = await openHost(hostA, url);
    await h.waitForEvent('ready');
    const frame = await h.frame();
    await frame.getByLabel('Access code').fill('4321');
    await frame.getByRole('button', { name: 'Continue' }).click();
    await h.waitForEvent('signer.authenticated');
    await typeAndSign(frame);
    await h.waitForEvent('signer.signed');
    expect((await s.call('GET', `/api/v1/signature-requests/${req.id}`)).body.recipients[0].status).toBe('SIGNED');
    await h.context.close();
  }, 90_000);

  it('a request cancelled after the session was made: the frame says so and tells the host invalid_state', async () => {
    const { req, url } = await sessionFor(hostA.origin);
    expect((await s.call('POST', `/api/v1/signature-requests/${req.id}/cancel`)).status).toBe(200);
    const h = await openHost(hostA, url);
    expect(await h.waitForEvent('ready')).toMatchObject({ requestStatus: 'CANCELLED' });
    expect(await h.waitForEvent('error')).toMatchObject({ code: 'invalid_state', message: 'This request was cancelled' });
    // destroy() removes the frame; nothing is emitted afterwards.
    await h.page.evaluate(() => window.signing.destroy());
    expect(await h.page.evaluate(() => document.querySelectorAll('iframe').length)).toBe(0);
    await h.context.close();
  }, 60_000);

  it('<esig-signing> in the markup loads the session once, dispatches esig:* events, and removes its frame when removed', async () => {
    const { req, url } = await sessionFor(hostA.origin);
    const h = await openHost(hostA, url, { path: '/element' });
    await h.waitForEvent('ready');
    await typeAndSign(await h.frame());
    expect(await h.waitForEvent('signer.signed')).toMatchObject({ requestId: req.id });
    expect(h.frameResponses.filter((r) => r.url() === url)).toHaveLength(1);
    await h.page.evaluate(() => document.querySelector('esig-signing').remove());
    expect(await h.page.evaluate(() => document.querySelectorAll('iframe').length)).toBe(0);
    expect(h.errors).toEqual([]);
    await h.context.close();
  }, 90_000);

  it('renders in a narrow (360 px) and a wide (1100 px) host: screenshots under /tmp', async () => {
    for (const width of [360, 1100]) {
      const { url } = await sessionFor(hostA.origin);
      const h = await openHost(hostA, url, { width });
      await h.waitForEvent('ready');
      await (await h.frame()).locator('.page canvas').first().waitFor({ timeout: 20_000 });
      await h.page.waitForTimeout(300);
      await h.page.screenshot({ path: `/tmp/esig-embed-${width}.png` });
      await h.context.close();
    }
  }, 90_000);
});
