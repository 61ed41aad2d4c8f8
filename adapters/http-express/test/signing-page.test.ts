import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import type { NextFunction, Request, Response } from 'express';
import { chromium } from 'playwright-core';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { makePdf } from '@esig/testkit/pdf';
import { SIGNING_PAGE_CSP, mountSigningPage } from '../src/signing-page.js';

// ------------------------------------------------------------------ A fake signer API (docs/signer-api.md)

type RequestStatus = 'SENT' | 'COMPLETED' | 'DECLINED' | 'EXPIRED' | 'CANCELLED';
type FieldType = 'signature' | 'initials' | 'date_signed' | 'text' | 'checkbox' | 'name' | 'email';
interface Field {
  id: string;
  documentId: string;
  type: FieldType;
  page: number;
  x: number;
  y: number;
  width: number;
  height: number;
  required: boolean;
  value: string | boolean | null;
}
interface Scenario {
  request: { id: string; title: string; message: string | null; status: RequestStatus; testMode: boolean; signingOrder: 'parallel' | 'sequential'; expiresAt: string | null };
  recipient: { id: string; firstName: string; lastName: string; email: string; role: 'signer' | 'cc'; status: string; authentication: 'none' | 'email_otp' | 'access_code'; yourTurn: boolean };
  documents: { id: string; name: string; pageCount: number }[];
  fields: Field[];
  finishedDocumentAvailable: boolean;
  authenticated: boolean;
  failures: number;
  accessCode: string | null;
  otp: string | null;
  othersPending: boolean;
}
interface Received {
  token: string;
  method: string;
  path: string;
  body: unknown;
}

const DOC = 'doc_1';
const field = (id: string, type: FieldType, page: number, x: number, y: number, width: number, height: number, required: boolean): Field =>
  ({ id, documentId: DOC, type, page, x, y, width, height, required, value: null });

const ALL_FIELDS: Field[] = [
  field('fld_sig', 'signature', 1, 72, 600, 200, 50, true),
  field('fld_date', 'date_signed', 1, 320, 613, 160, 24, false),
  field('fld_name', 'name', 1, 72, 520, 200, 24, true),
  field('fld_email', 'email', 1, 320, 520, 200, 24, false),
  field('fld_title', 'text', 2, 72, 200, 220, 24, true),
  field('fld_agree', 'checkbox', 2, 72, 260, 18, 18, true),
  field('fld_init', 'initials', 2, 480, 700, 60, 30, false),
];

const scenarios = new Map<string, Scenario>();
const received: Received[] = [];
let pdf: Uint8Array;
let seq = 0;

const create = (over: {
  status?: RequestStatus; recipientStatus?: string; authentication?: Scenario['recipient']['authentication']; yourTurn?: boolean;
  failures?: number; finished?: boolean; othersPending?: boolean; fields?: Field[]; testMode?: boolean;
} = {}): string => {
  const token = `tok${++seq}_${Math.random().toString(36).slice(2)}`;
  scenarios.set(token, {
    request: { id: `req_${seq}`, title: 'Mutual NDA', message: 'Hi Ada, please sign by Friday.', status: over.status ?? 'SENT', testMode: over.testMode ?? true, signingOrder: 'parallel', expiresAt: null },
    recipient: {
      id: `rcp_${seq}`, firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com', role: 'signer', status: over.recipientStatus ?? 'NOTIFIED',
      authentication: over.authentication ?? 'none', yourTurn: over.yourTurn ?? true,
    },
    documents: [{ id: DOC, name: 'nda.pdf', pageCount: 2 }],
    fields: structuredClone(over.fields ?? ALL_FIELDS),
    finishedDocumentAvailable: over.finished ?? false,
    authenticated: false,
    failures: over.failures ?? 0,
    accessCode: over.authentication === 'access_code' ? 'BLUE-42' : null,
    otp: null,
    othersPending: over.othersPending ?? false,
  });
  return token;
};

const isAuthenticated = (s: Scenario) => s.recipient.authentication === 'none' || s.authenticated;

const body = (s: Scenario) => ({
  request: s.request,
  recipient: { ...s.recipient, authenticated: isAuthenticated(s), locked: s.failures >= 5 },
  documents: isAuthenticated(s) ? s.documents : [],
  fields: isAuthenticated(s) ? s.fields : [],
  finishedDocumentAvailable: s.finishedDocumentAvailable,
});

const problem = (res: Response, status: 400 | 404 | 409, code: string, detail: string) =>
  void res.status(status).type('application/problem+json').send(JSON.stringify({ type: `urn:esig:problem:${code}`, title: code, status, detail, code, requestId: 'log_test' }));

const fakeSignerApi = (app: express.Express) => {
  const base = '/api/v1/signing/:token';
  app.use(base, express.json({ type: () => true }), (req: Request, res: Response, next: NextFunction) => {
    received.push({ token: String(req.params.token), method: req.method, path: req.path === '/' ? '' : req.path, body: req.body });
    const s = scenarios.get(String(req.params.token));
    if (!s) return problem(res, 404, 'not_found', 'No such signing link.');
    res.locals.s = s;
    next();
  });
  const scenario = (res: Response) => res.locals.s as Scenario;
  const open = (s: Scenario) => s.request.status === 'SENT' && !['SIGNED', 'DECLINED'].includes(s.recipient.status);

  app.get(base, (_req, res) => void res.json(body(scenario(res))));
  app.post(`${base}/view`, (_req, res) => void res.json(body(scenario(res))));
  app.get(`${base}/documents/:documentId`, (req, res) => {
    const s = scenario(res);
    if (!isAuthenticated(s)) return problem(res, 409, 'invalid_state', 'Identify yourself first.');
    if (!s.documents.some((d) => d.id === req.params.documentId)) return problem(res, 404, 'not_found', 'No such document.');
    res.type('application/pdf').send(Buffer.from(pdf));
  });
  app.get(`${base}/document`, (_req, res) => {
    if (!scenario(res).finishedDocumentAvailable) return problem(res, 409, 'invalid_state', 'Not finished yet.');
    res.type('application/pdf').send(Buffer.from(pdf));
  });
  app.post(`${base}/otp`, (_req, res) => {
    const s = scenario(res);
    if (s.recipient.authentication !== 'email_otp') return problem(res, 409, 'invalid_state', 'No code to send.');
    s.otp = '123456';
    res.status(202).json({ sentTo: 'a…@example.com' });
  });
  app.post(`${base}/authenticate`, (req, res) => {
    const s = scenario(res);
    if (s.failures >= 5) return problem(res, 409, 'invalid_state', 'Identification is locked after 5 failed attempts.');
    const expected = s.recipient.authentication === 'email_otp' ? s.otp : s.accessCode;
    if (expected !== null && req.body?.code === expected) {
      s.authenticated = true;
      return void res.json(body(s));
    }
    s.failures++;
    const left = 5 - s.failures;
    problem(res, 400, 'validation_failed', left > 0 ? `The code is wrong or expired. ${left} attempts left.` : 'The code is wrong. Identification is now locked.');
  });
  app.post(`${base}/sign`, (req, res) => {
    const s = scenario(res);
    if (!open(s) || !isAuthenticated(s) || !s.recipient.yourTurn) return problem(res, 409, 'invalid_state', 'Cannot sign now.');
    const { values, signature } = req.body ?? {};
    if (signature?.kind !== 'typed' && signature?.kind !== 'drawn') return problem(res, 400, 'validation_failed', 'signature.kind');
    if (signature.kind === 'drawn' && !(typeof signature.value === 'string' && signature.value.startsWith('data:image/png;base64,') && signature.value.length <= 200 * 1024))
      return problem(res, 400, 'validation_failed', 'signature.value');
    for (const f of s.fields) {
      const v = values?.[f.id];
      if (f.type === 'signature' || f.type === 'date_signed') {
        if (v !== undefined) return problem(res, 400, 'validation_failed', `values.${f.id} is set automatically.`);
        continue;
      }
      if (f.required && !(v === true || (typeof v === 'string' && v.trim() !== ''))) return problem(res, 400, 'validation_failed', `values.${f.id} is required.`);
      f.value = v ?? null;
    }
    s.recipient.status = 'SIGNED';
    if (!s.othersPending) s.request.status = 'COMPLETED';
    res.json(body(s));
  });
  app.post(`${base}/decline`, (req, res) => {
    const s = scenario(res);
    const reason = req.body?.reason;
    if (typeof reason !== 'string' || reason.length < 1 || reason.length > 1000) return problem(res, 400, 'validation_failed', 'reason');
    if (!open(s)) return problem(res, 409, 'invalid_state', 'Cannot decline now.');
    s.recipient.status = 'DECLINED';
    s.request.status = 'DECLINED';
    res.json(body(s));
  });
};

// ------------------------------------------------------------------------------------------ Harness

let server: Server;
let baseUrl: string;
let browser: Browser;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  pdf = await makePdf(2);
  const app = express();
  mountSigningPage(app);
  fakeSignerApi(app);
  server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
});

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => server?.close(resolve));
});

afterEach(async () => {
  await Promise.all(contexts.splice(0).map((c) => c.close()));
});

const DESKTOP = { width: 1280, height: 900 };
const PHONE = { width: 360, height: 740 };

/** Opens the page for a token; collects console errors (an allowed HTTP status is an expected API answer). */
const open = async (token: string, opts: { viewport?: { width: number; height: number }; phone?: boolean; allowStatus?: number[] } = {}) => {
  const context = await browser.newContext({
    viewport: opts.viewport ?? DESKTOP,
    ...(opts.phone ? { deviceScaleFactor: 2, isMobile: true, hasTouch: true } : {}),
  });
  contexts.push(context);
  const page = await context.newPage();
  const errors: string[] = [];
  const allowed = (text: string) => (opts.allowStatus ?? []).some((s) => text.includes(`status of ${s}`));
  page.on('console', (m) => {
    if (m.type() === 'error' && !allowed(m.text())) errors.push(`${m.text()} (${m.location().url})`);
  });
  page.on('pageerror', (e) => errors.push(String(e)));
  const response = await page.goto(`${baseUrl}/sign/${token}`);
  return { page, errors, response: response! };
};

/** Waits until every page of the documents is rendered and all fields are placed. */
const documentsReady = async (page: Page) => {
  await page.locator('#status', { hasText: 'The document is ready' }).waitFor();
};

const calls = (token: string, path: string) => received.filter((r) => r.token === token && r.path === path);

const heading = (page: Page) => page.locator('#message-heading');

/** The field's box relative to its page, in PDF points (should equal the field's own coordinates). */
const placement = async (page: Page, fieldId: string, pageNo: number) => {
  const pageBox = (await page.locator(`.page[data-page="${pageNo}"]`).boundingBox())!;
  const box = (await page.locator(`.page[data-page="${pageNo}"] [data-field-id="${fieldId}"]`).boundingBox())!;
  const scale = pageBox.width / 612;
  return { x: (box.x - pageBox.x) / scale, y: (box.y - pageBox.y) / scale, width: box.width / scale, height: box.height / scale, pageHeight: pageBox.height / scale, pageWidth: pageBox.width };
};

const expectPlaced = async (page: Page, f: Field) => {
  const p = await placement(page, f.id, f.page);
  expect(p.pageHeight).toBeCloseTo(792, 0);
  for (const k of ['x', 'y', 'width', 'height'] as const) expect(Math.abs(p[k] - f[k]), `${f.id}.${k}`).toBeLessThan(1.5);
};

/** Dark pixels on each rendered page canvas: pdf.js really drew the text. */
const inkPerCanvas = (page: Page) =>
  page.evaluate(`[...document.querySelectorAll('.page canvas')].map((c) => {
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let n = 0;
    for (let i = 0; i < d.length; i += 4) if (d[i + 3] > 0 && d[i] < 128) n++;
    return n;
  })`) as Promise<number[]>;

const drawStrokes = async (page: Page) => {
  const pad = (await page.locator('#draw-pad').boundingBox())!;
  const at = (fx: number, fy: number) => [pad.x + pad.width * fx, pad.y + pad.height * fy] as const;
  await page.mouse.move(...at(0.1, 0.6));
  await page.mouse.down();
  for (let i = 1; i <= 20; i++) await page.mouse.move(...at(0.1 + i * 0.04, 0.6 - Math.sin(i / 3) * 0.3));
  await page.mouse.up();
  await page.mouse.move(...at(0.3, 0.8));
  await page.mouse.down();
  await page.mouse.move(...at(0.8, 0.75), { steps: 8 });
  await page.mouse.up();
};

// ------------------------------------------------------------------------------------------- Tests

describe('signing page: HTTP', () => {
  it('serves the same HTML shell for any token with strict security headers', async () => {
    for (const token of ['anything', 'tok_unknown']) {
      const res = await fetch(`${baseUrl}/sign/${token}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      expect(res.headers.get('content-security-policy')).toBe(SIGNING_PAGE_CSP);
      expect(res.headers.get('referrer-policy')).toBe('no-referrer');
      expect(res.headers.get('x-frame-options')).toBe('DENY');
      expect(res.headers.get('cache-control')).toBe('no-store');
      const html = await res.text();
      expect(html).toContain('<html lang="en">');
      expect(html).not.toContain(token);
    }
    expect(SIGNING_PAGE_CSP).toBe(
      "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; worker-src 'self' blob:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
    );
  });

  it('serves the script, style and pdf.js from node_modules, and nothing else under /sign/assets', async () => {
    for (const [path, type] of [
      ['app.js', /^text\/javascript/],
      ['style.css', /^text\/css/],
      ['favicon.svg', /^image\/svg\+xml/],
      ['pdfjs/pdf.min.mjs', /^text\/javascript/],
      ['pdfjs/pdf.worker.min.mjs', /^text\/javascript/],
    ] as const) {
      const res = await fetch(`${baseUrl}/sign/assets/${path}`);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type'), path).toMatch(type);
      expect(res.headers.get('referrer-policy')).toBe('no-referrer');
      expect((await res.arrayBuffer()).byteLength, path).toBeGreaterThan(100);
      // Revalidated at every use, so that an upgrade reaches every open page's next load.
      expect(res.headers.get('cache-control'), path).toBe('public, no-cache');
      const etag = res.headers.get('etag')!;
      expect(etag, path).toMatch(/^"[0-9a-f]{16}"$/);
      expect((await fetch(`${baseUrl}/sign/assets/${path}`, { headers: { 'if-none-match': etag } })).status, path).toBe(304);
      expect((await fetch(`${baseUrl}/sign/assets/${path}`, { headers: { 'if-none-match': '"0000000000000000"' } })).status, path).toBe(200);
    }
    expect((await fetch(`${baseUrl}/sign/assets/index.html`)).status).toBe(404);
    expect((await fetch(`${baseUrl}/sign/assets/pdfjs/pdf.mjs`)).status).toBe(404);
  });
});

describe('signing page in Chromium', () => {
  it('renders both PDF pages, places the fields, checks required ones and signs with a typed signature', async () => {
    const token = create();
    const { page, errors, response } = await open(token);
    expect(response.headers()['content-security-policy']).toBe(SIGNING_PAGE_CSP);
    await documentsReady(page);

    expect(await page.locator('html').getAttribute('lang')).toBe('en');
    expect(await page.locator('#test-banner').innerText()).toBe('TEST — not legally binding');
    expect(await page.locator('h1').innerText()).toBe('Mutual NDA');
    expect(await page.locator('.page canvas').count()).toBe(2);
    for (const ink of await inkPerCanvas(page)) expect(ink).toBeGreaterThan(50);
    expect(calls(token, '/documents/doc_1')).toHaveLength(1);
    expect(calls(token, '/view')).toHaveLength(1);

    // Every field sits over the right page at its coordinates, scaled to the rendered width.
    for (const f of ALL_FIELDS) await expectPlaced(page, f);
    expect(await page.locator('.page[data-page="2"] [data-field-id="fld_title"]').count()).toBe(1);
    await page.setViewportSize({ width: 700, height: 900 });
    await page.waitForFunction(`document.querySelector('.page').clientWidth < 690`);
    await expect.poll(async () => Math.abs((await placement(page, 'fld_sig', 1)).x - 72)).toBeLessThan(1.5);
    for (const f of ALL_FIELDS) await expectPlaced(page, f);
    await page.setViewportSize(DESKTOP);

    // Prefilled, labelled, typed.
    expect(await page.getByLabel('Full name, page 1 (required)').inputValue()).toBe('Ada Lovelace');
    expect(await page.getByLabel('Email address, page 1').inputValue()).toBe('ada@example.com');
    expect(await page.locator('#field-fld_agree').getAttribute('type')).toBe('checkbox');
    expect(await page.locator('#field-fld_date').innerText()).toContain(String(new Date().getFullYear()));
    const unlabelled = await page.evaluate(
      `[...document.querySelectorAll('input, textarea')].filter((i) => i.labels.length === 0 && !i.getAttribute('aria-label')).map((i) => i.id)`,
    );
    expect(unlabelled).toEqual([]);

    // Required fields are checked before anything is sent.
    await page.getByRole('button', { name: 'Sign', exact: true }).click();
    await page.locator('#status', { hasText: 'Please complete 2 required fields' }).waitFor();
    expect(await page.locator('#field-fld_title').getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('#field-fld_agree').getAttribute('aria-invalid')).toBe('true');
    expect(await page.evaluate('document.activeElement.id')).toBe('field-fld_title');
    expect(calls(token, '/sign')).toHaveLength(0);

    await page.getByLabel('Text, page 2 (required)').fill('Chief Analyst');
    await page.getByLabel('Checkbox, page 2 (required)').check();

    // The signature panel, typed mode.
    await page.locator('#field-fld_sig').click();
    const dialog = page.getByRole('dialog', { name: 'Your signature' });
    await dialog.waitFor();
    expect(await page.locator('#typed-name').inputValue()).toBe('Ada Lovelace');
    expect(await page.locator('#typed-preview').innerText()).toBe('Ada Lovelace');
    expect(await page.evaluate(`getComputedStyle(document.getElementById('typed-preview')).fontFamily`)).toContain('cursive');
    await dialog.getByRole('button', { name: 'Adopt signature' }).click();
    await dialog.waitFor({ state: 'hidden' });
    expect(await page.locator('#field-fld_sig .typed-signature').innerText()).toBe('Ada Lovelace');
    expect(await page.locator('#progress').innerText()).toBe('4 of 4 required done');

    await page.screenshot({ path: '/tmp/esig-sign-desktop.png', fullPage: true });

    await page.getByRole('button', { name: 'Sign', exact: true }).click();
    await heading(page).filter({ hasText: 'Thank you — you’ve signed' }).waitFor();
    expect(await page.locator('#message-body').innerText()).toContain('Everyone has signed “Mutual NDA”.');
    expect(await page.locator('#action-bar').isVisible()).toBe(false);
    expect(calls(token, '/sign').map((c) => c.body)).toEqual([
      {
        values: { fld_name: 'Ada Lovelace', fld_email: 'ada@example.com', fld_title: 'Chief Analyst', fld_agree: true },
        signature: { kind: 'typed', value: 'Ada Lovelace' },
      },
    ]);
    expect(calls(token, '/view')).toHaveLength(1);
    expect(errors).toEqual([]);
  });

  it('signs with a drawn signature (mouse): a PNG data URL', async () => {
    const token = create({ othersPending: true, fields: [ALL_FIELDS[0]!] });
    const { page, errors } = await open(token);
    await documentsReady(page);

    // Signing without a signature opens the panel and finishes once one is adopted.
    await page.getByRole('button', { name: 'Sign', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'Your signature' });
    await dialog.waitFor();
    await dialog.getByRole('button', { name: 'Draw' }).click();
    expect(await page.locator('#mode-draw').getAttribute('aria-pressed')).toBe('true');
    await dialog.getByRole('button', { name: 'Adopt signature' }).click();
    expect(await page.locator('#signature-error').innerText()).toBe('Draw your signature in the box first.');
    await drawStrokes(page);
    await dialog.getByRole('button', { name: 'Clear' }).click();
    await dialog.getByRole('button', { name: 'Adopt signature' }).click();
    expect(await page.locator('#signature-error').isVisible()).toBe(true);
    await drawStrokes(page);
    await dialog.getByRole('button', { name: 'Adopt signature' }).click();

    await heading(page).filter({ hasText: 'Thank you — you’ve signed' }).waitFor();
    expect(await page.locator('#message-body').innerText()).toContain('once everyone has signed');
    const [sign] = calls(token, '/sign');
    const sent = sign!.body as { values: object; signature: { kind: string; value: string } };
    expect(sent.values).toEqual({});
    expect(sent.signature.kind).toBe('drawn');
    expect(sent.signature.value).toMatch(/^data:image\/png;base64,[A-Za-z0-9+/]+=*$/);
    const png = Buffer.from(sent.signature.value.slice('data:image/png;base64,'.length), 'base64');
    expect([...png.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    expect(png.readUInt32BE(16)).toBe(600); // IHDR width × height: the pad's own resolution
    expect(png.readUInt32BE(20)).toBe(200);
    expect(png.length).toBeLessThan(200 * 1024);
    expect(errors).toEqual([]);
  });

  it('declines with a reason', async () => {
    const token = create();
    const { page, errors } = await open(token);
    await documentsReady(page);
    await page.getByRole('button', { name: 'Decline', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'Decline to sign' });
    await dialog.waitFor();
    await dialog.getByRole('button', { name: 'Decline to sign' }).click();
    expect(await page.locator('#decline-error').innerText()).toBe('Tell the sender why you are declining.');
    expect(calls(token, '/decline')).toHaveLength(0);
    await dialog.getByLabel('Reason for declining').fill('The company name is wrong.');
    await dialog.getByRole('button', { name: 'Decline to sign' }).click();
    await heading(page).filter({ hasText: 'You declined to sign' }).waitFor();
    expect(calls(token, '/decline').map((c) => c.body)).toEqual([{ reason: 'The company name is wrong.' }]);
    expect(calls(token, '/sign')).toHaveLength(0);
    expect(errors).toEqual([]);
  });

  it.each([
    ['a completed request', { status: 'COMPLETED', recipientStatus: 'SIGNED', finished: true }, 'This document is complete', 'Everyone has signed'],
    ['a completed request still being sealed', { status: 'COMPLETED', recipientStatus: 'SIGNED' }, 'This document is complete', 'being prepared'],
    ['a declined request', { status: 'DECLINED' }, 'This request was declined', 'can no longer be signed'],
    ['an expired request', { status: 'EXPIRED' }, 'This request has expired', 'deadline'],
    ['a cancelled request', { status: 'CANCELLED' }, 'This request was cancelled', 'nothing for you to sign'],
    ['a recipient who already signed', { recipientStatus: 'SIGNED' }, 'You’ve already signed', 'You signed “Mutual NDA”'],
    ['a recipient who already declined', { status: 'DECLINED', recipientStatus: 'DECLINED' }, 'You declined to sign', 'The sender has been told'],
    ['a sequential signer whose turn it is not', { yourTurn: false }, 'It’s not your turn yet', 'before you'],
    ['a locked identification', { authentication: 'email_otp', failures: 5 }, 'Identification is locked', 'Contact the sender'],
  ] as const)('shows a clear message for %s', async (_name, over, title, text) => {
    const token = create(over);
    const { page, errors } = await open(token);
    await heading(page).filter({ hasText: title }).waitFor();
    expect(await page.locator('#message-body').innerText()).toContain(text);
    expect(await page.evaluate('document.activeElement.id')).toBe('message-heading');
    expect(await page.locator('#action-bar').isVisible()).toBe(false);
    expect(await page.locator('.page').count()).toBe(0);
    expect(received.filter((r) => r.token === token && r.path.startsWith('/documents'))).toHaveLength(0);
    const download = page.getByRole('link', { name: 'Download the signed document (PDF)' });
    if ('finished' in over && over.finished) {
      expect(await download.getAttribute('href')).toBe(`/api/v1/signing/${token}/document`);
      const res = await page.request.get(`${baseUrl}/api/v1/signing/${token}/document`);
      expect(res.headers()['content-type']).toBe('application/pdf');
    } else expect(await download.count()).toBe(0);
    expect(errors).toEqual([]);
  });

  it('shows a clear message for an unknown link (404)', async () => {
    const { page, errors } = await open('tok_nobody_knows', { allowStatus: [404] });
    await heading(page).filter({ hasText: 'This signing link isn’t valid' }).waitFor();
    expect(await page.locator('#message-body').innerText()).toContain('ask the sender for a new one');
    expect(errors).toEqual([]);
  });

  it('identifies by an emailed code: send, wrong code, right code', async () => {
    const token = create({ authentication: 'email_otp' });
    const { page, errors } = await open(token, { allowStatus: [400] });
    await page.getByRole('heading', { name: 'Confirm it’s you' }).waitFor();
    expect(await page.locator('.page').count()).toBe(0);
    expect(received.filter((r) => r.token === token && r.path.startsWith('/documents'))).toHaveLength(0);

    await page.getByRole('button', { name: 'Send me a code' }).click();
    await page.locator('#status', { hasText: 'We sent a code to a…@example.com' }).waitFor();
    expect(calls(token, '/otp').map((c) => c.body)).toEqual([{}]);
    expect(await page.evaluate('document.activeElement.id')).toBe('code');

    await page.getByLabel('Code from the email').fill('000000');
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.locator('#code-error', { hasText: '4 attempts left' }).waitFor();
    expect(await page.locator('#code').getAttribute('aria-invalid')).toBe('true');

    await page.getByLabel('Code from the email').fill('123456');
    await page.getByRole('button', { name: 'Continue' }).click();
    await documentsReady(page);
    expect(await page.locator('.page canvas').count()).toBe(2);
    expect(await page.locator('#identify').isVisible()).toBe(false);
    expect(calls(token, '/authenticate').map((c) => c.body)).toEqual([{ code: '000000' }, { code: '123456' }]);
    expect(errors).toEqual([]);
  });

  it('identifies by an access code (no code is mailed) and locks after the last failure', async () => {
    const token = create({ authentication: 'access_code' });
    const { page, errors } = await open(token, { allowStatus: [400] });
    await page.getByRole('heading', { name: 'Confirm it’s you' }).waitFor();
    expect(await page.getByRole('button', { name: 'Send me a code' }).isVisible()).toBe(false);
    await page.getByLabel('Access code').fill('BLUE-42');
    await page.getByRole('button', { name: 'Continue' }).click();
    await documentsReady(page);
    expect(errors).toEqual([]);

    const last = create({ authentication: 'access_code', failures: 4 });
    const second = await open(last, { allowStatus: [400] });
    await second.page.getByLabel('Access code').fill('guess');
    await second.page.getByRole('button', { name: 'Continue' }).click();
    await heading(second.page).filter({ hasText: 'Identification is locked' }).waitFor();
    expect(second.errors).toEqual([]);
  });

  it('fits a 360×740 phone: pages scale to the width, no horizontal scroll, controls reachable', async () => {
    const token = create();
    const { page, errors } = await open(token, { viewport: PHONE, phone: true });
    await documentsReady(page);
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(360);
    const pageBox = (await page.locator('.page[data-page="1"]').boundingBox())!;
    expect(pageBox.x).toBeGreaterThanOrEqual(0);
    expect(pageBox.x + pageBox.width).toBeLessThanOrEqual(360);
    expect(pageBox.width).toBeGreaterThan(320);
    for (const f of ALL_FIELDS) await expectPlaced(page, f);
    for (const name of ['Sign', 'Decline']) {
      const b = (await page.getByRole('button', { name, exact: true }).boundingBox())!;
      expect(b.x).toBeGreaterThanOrEqual(0);
      expect(b.x + b.width).toBeLessThanOrEqual(360);
      expect(b.y + b.height).toBeLessThanOrEqual(740);
    }
    await page.screenshot({ path: '/tmp/esig-sign-phone.png', fullPage: true });

    // The signature panel fits too.
    await page.locator('#field-fld_sig').tap();
    const dialog = page.getByRole('dialog', { name: 'Your signature' });
    await dialog.waitFor();
    const d = (await dialog.boundingBox())!;
    expect(d.x).toBeGreaterThanOrEqual(0);
    expect(d.x + d.width).toBeLessThanOrEqual(360);
    await dialog.getByRole('button', { name: 'Draw' }).tap();
    // Let the toggle's colour transition finish before the picture (when there is one: none under reduced motion).
    await page.evaluate('Promise.all(document.getAnimations().map((a) => a.finished)).then(() => true)');
    await page.screenshot({ path: '/tmp/esig-sign-phone-dialog.png' });
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(360);

    // A finger draws too (touch input becomes pointer events).
    const pad = (await page.locator('#draw-pad').boundingBox())!;
    const cdp = await page.context().newCDPSession(page);
    const touch = (type: 'touchStart' | 'touchMove' | 'touchEnd', fx: number, fy: number) =>
      cdp.send('Input.dispatchTouchEvent', { type, touchPoints: type === 'touchEnd' ? [] : [{ x: pad.x + pad.width * fx, y: pad.y + pad.height * fy }] });
    await touch('touchStart', 0.1, 0.5);
    for (let i = 1; i <= 10; i++) await touch('touchMove', 0.1 + i * 0.07, 0.5 + (i % 2 ? 0.2 : -0.2));
    await touch('touchEnd', 0, 0);
    // Chromium's gesture detector randomly drops a synthetic zero-length tap that follows a synthetic drag
    // within ~0.5 s (even on a bare page), so the button is pressed with the mouse here.
    await dialog.getByRole('button', { name: 'Adopt signature' }).click();
    await dialog.waitFor({ state: 'hidden' });
    expect(await page.locator('#field-fld_sig img').getAttribute('src')).toMatch(/^data:image\/png;base64,/);
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(360);
    expect(errors).toEqual([]);
  });
});
