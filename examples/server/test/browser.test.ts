import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestSmtpServer } from '@esig/testkit/smtp';
import { startSmtpServer } from '@esig/testkit/smtp';
import type { TestServer } from './harness.js';
import { startTestServer } from './harness.js';

let s: TestServer;
let smtp: TestSmtpServer;
let browser: Browser;
const work = mkdtempSync(join(tmpdir(), 'esig-browser-'));

beforeAll(async () => {
  smtp = await startSmtpServer();
  // The public URL is set once the port is known: the links in the mails must reach this server.
  s = await startTestServer({ ESIG_TEST_SMTP_URL: smtp.url, ESIG_WORKER_POLL_MS: '50', ESIG_PORT: '0' });
  browser = await chromium.launch({
    executablePath: process.env.ESIG_CHROMIUM ?? '/usr/bin/chromium',
    args: ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
});
afterAll(async () => {
  await browser?.close();
  await s?.close();
  await smtp?.close();
  rmSync(work, { recursive: true, force: true });
});

/** The link in the mail points at ESIG_PUBLIC_URL (localhost:3000 by default); the browser opens it here. */
const linkFrom = (text: string) => {
  const m = /\/sign\/([A-Za-z0-9]{43,})/.exec(text);
  if (!m) throw new Error(`no signing link in:\n${text}`);
  return `${s.url}/sign/${m[1]}`;
};

const openPage = async (url: string) => {
  const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(url);
  return { page, errors, close: () => context.close() };
};

const drawSignature = async (page: Page) => {
  const pad = (await page.locator('#draw-pad').boundingBox())!;
  const at = (fx: number, fy: number): [number, number] => [pad.x + pad.width * fx, pad.y + pad.height * fy];
  await page.mouse.move(...at(0.1, 0.6));
  await page.mouse.down();
  for (let i = 1; i <= 20; i++) await page.mouse.move(...at(0.1 + i * 0.04, 0.6 - Math.sin(i / 3) * 0.3));
  await page.mouse.up();
};

const setup = async (title: string) => {
  const doc = await s.uploadPdf(`${title}.pdf`, 2);
  const req = (await s.call('POST', '/api/v1/signature-requests', { body: { title, documentIds: [doc.id] } })).body;
  const email = `${title.toLowerCase().replace(/\W+/g, '-')}@example.com`;
  const rcp = (await s.call('POST', `/api/v1/signature-requests/${req.id}/recipients`, { body: { email, firstName: 'Grace', lastName: 'Hopper' } })).body;
  const field = async (type: string, page: number, y: number, extra: object = {}) =>
    (await s.call('POST', `/api/v1/signature-requests/${req.id}/fields`, { body: { documentId: doc.id, recipientId: rcp.id, type, page, x: 72, y, width: 200, height: 40, ...extra } })).body;
  const text = await field('text', 1, 200);
  await field('checkbox', 1, 300, { width: 16, height: 16 });
  await field('signature', 2, 500);
  await field('date_signed', 2, 560, { height: 20 });
  expect((await s.call('POST', `/api/v1/signature-requests/${req.id}/send`)).status).toBe(200);
  const mail = await smtp.waitFor((m) => m.to.includes(email) && /Please sign/.test(m.subject), 15_000);
  return { doc, req, rcp, text, link: linkFrom(mail.html) };
};

describe('signing in a real browser (Chromium), from the link in the mail', () => {
  it('fills the fields, draws a signature, signs, and the request completes with both PDFs', async () => {
    const { req, text, link } = await setup('Browser NDA');
    const { page, errors, close } = await openPage(link);
    await page.locator('#test-banner').waitFor();
    await page.locator('.page canvas').nth(1).waitFor();
    expect(await page.locator('h1').innerText()).toBe('Browser NDA');

    await page.locator(`#field-${text.id}`).fill('Rear Admiral');
    await page.locator('input[type="checkbox"]').check();
    await page.getByRole('button', { name: 'Sign', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'Your signature' });
    await dialog.getByRole('button', { name: 'Draw' }).click();
    await drawSignature(page);
    await dialog.getByRole('button', { name: 'Adopt signature' }).click();
    await page.locator('#message-heading').filter({ hasText: /signed/i }).waitFor({ timeout: 15_000 });
    expect(errors).toEqual([]);

    // The page recorded viewed before signing; the worker seals the request, which only then is COMPLETED.
    const got = (await s.call('GET', `/api/v1/signature-requests/${req.id}`)).body;
    expect(got.recipients[0].status).toBe('SIGNED');
    const viewed = (await s.call('GET', '/api/v1/events?type=request.viewed&limit=100')).body.data.filter((e: any) => e.data.request_id === req.id);
    expect(viewed).toHaveLength(1);
    // The page, left as it is, offers the finished document once it exists; then the API has it too.
    await page.getByRole('link', { name: 'Download the signed document (PDF)' }).waitFor({ timeout: 15_000 });
    expect((await s.call('GET', `/api/v1/signature-requests/${req.id}`)).body.status).toBe('COMPLETED');
    const res = await fetch(`${s.url}/api/v1/signature-requests/${req.id}/document`, { headers: { authorization: `Bearer ${s.key}` } });
    expect(res.status).toBe(200);
    const finished = new Uint8Array(await res.arrayBuffer());
    const file = join(work, 'finished.pdf');
    writeFileSync(file, finished);
    expect(execFileSync('pdftotext', [file, '-'], { encoding: 'utf8' })).toContain('Rear Admiral');
    expect(execFileSync('pdfimages', ['-list', file], { encoding: 'utf8' })).toMatch(/image|smask/);

    // Reloading the link now shows the completed state with the finished document to download.
    await page.reload();
    await page.locator('#message-heading').filter({ hasText: 'This document is complete' }).waitFor({ timeout: 15_000 });
    await close();
  }, 60_000);

  it('declines with a reason, and the request ends as DECLINED', async () => {
    const { req, link } = await setup('Browser decline');
    const { page, errors, close } = await openPage(link);
    await page.locator('.page canvas').first().waitFor();
    await page.getByRole('button', { name: 'Decline', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'Decline to sign' });
    await dialog.getByLabel('Reason for declining').fill('The amount is wrong.');
    await dialog.getByRole('button', { name: 'Decline to sign' }).click();
    await page.locator('#message-heading').filter({ hasText: 'You declined to sign' }).waitFor();
    expect((await s.call('GET', `/api/v1/signature-requests/${req.id}`)).body.status).toBe('DECLINED');
    expect(errors).toEqual([]);
    await close();
  }, 60_000);
});
