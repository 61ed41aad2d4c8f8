import type { CertificateData } from '@esig/core';
import * as E from 'fp-ts/lib/Either.js';
import { PDFDocument } from 'pdf-lib';
import { beforeAll, describe, expect, it } from 'vitest';
import { TEST_MARK, pdfLibRenderer } from '../src/index.js';
import { certificateData } from './fixtures.js';
import { flat, pdfText, pdfWords, qpdfCheck } from './tools.js';

const render = async (data: CertificateData, testMode: boolean): Promise<Uint8Array> => {
  const r = await pdfLibRenderer.renderCertificate(data, testMode)();
  if (E.isLeft(r)) throw new Error(`render failed: ${r.left.detail}`);
  return r.right;
};

const pagesOf = async (pdf: Uint8Array) => (await PDFDocument.load(pdf)).getPageCount();

/** Ten signers: 42 events, several pages. */
const data = certificateData(10);
let live: Uint8Array;
let test: Uint8Array;
let text: string;

beforeAll(async () => {
  live = await render(data, false);
  test = await render({ ...data, testMode: true }, true);
  text = flat(await pdfText(live));
});

describe('pdfLibRenderer.renderCertificate', () => {
  it('opens with pdf-lib as A4 pages, several of them for ten signers', async () => {
    const doc = await PDFDocument.load(live);
    expect(doc.getPageCount()).toBeGreaterThan(1);
    for (const page of doc.getPages()) {
      expect(page.getWidth()).toBeCloseTo(595.28, 1);
      expect(page.getHeight()).toBeCloseTo(841.89, 1);
    }
  });

  it('passes qpdf --check in live and test mode', async () => {
    for (const pdf of [live, test]) {
      const { code, output } = await qpdfCheck(pdf);
      expect(output).toContain('No syntax or stream encoding errors found');
      expect(code).toBe(0);
    }
  });

  it('names the certificate, the request and the requested level, and never an achieved one', () => {
    expect(text).toContain('Evidence certificate');
    for (const s of [data.certificateId, data.requestId, data.title]) expect(text).toContain(s);
    expect(text).toContain('Requested signature level: SES');
    expect(text).not.toMatch(/achieved/i);
    for (const t of ['2026-11-23 08:00:00 UTC', '2026-11-23 08:01:00 UTC', '2026-11-23 08:30:00 UTC']) expect(text).toContain(t);
  });

  it('lists each document with its name, pages and SHA-256, and the finished document’s SHA-256', () => {
    for (const d of data.documents) {
      expect(text).toContain(d.name);
      expect(text).toContain(d.sha256);
    }
    expect(text).toContain(`${data.documents[0]!.id} 2 ${data.documents[0]!.sha256}`);
    expect(text).toContain(`${data.documents[1]!.id} 3 ${data.documents[1]!.sha256}`);
    expect(text).toContain(data.finishedDocumentSha256);
  });

  it('lists the recipients with e-mail, role, identification and signing time', () => {
    for (const r of data.recipients) {
      expect(text).toContain(`${r.email} signer`);
      expect(text).toContain(r.name);
    }
    expect(text).toContain('One-time code e-mailed to the recipient');
    expect(text).toContain('None (signing link only)');
    expect(text).toContain('2026-11-23 08:19:00 UTC');
  });

  it('lists every event in order with its UTC time, IP address and user agent', () => {
    let from = 0;
    data.events.forEach((e, i) => {
      const heading = `${i + 1}. ${new Date(e.at).toISOString().slice(0, 19).replace('T', ' ')} UTC`;
      const at = text.indexOf(heading, from);
      expect(at, heading).toBeGreaterThanOrEqual(from);
      // The event's own block: up to the next event's number.
      const block = text.slice(at, i + 1 < data.events.length ? text.indexOf(`${i + 2}. 2026-`, at) : undefined);
      expect(block).toContain(`(${e.action})`);
      if (e.ip) expect(block).toContain(e.ip);
      if (e.userAgent) expect(block).toContain(e.userAgent);
      if (e.actor) expect(block).toContain(e.actor);
      from = at + heading.length;
    });
  });

  it('marks every page in test mode, and none in live mode', async () => {
    const pages = await pagesOf(test);
    expect(pages).toBeGreaterThan(1);
    for (let p = 1; p <= pages; p++) {
      expect(await pdfText(test, p)).toContain(TEST_MARK);
      expect(await pdfText(live, p)).not.toContain('TEST');
    }
  });

  it('marks a test request’s certificate even when the caller passes testMode false', async () => {
    const pdf = await render({ ...data, testMode: true }, false);
    for (let p = 1; p <= (await pagesOf(pdf)); p++) expect(await pdfText(pdf, p)).toContain(TEST_MARK);
  });

  it('renders emoji and CJK in names, titles and user agents as "?" instead of failing', async () => {
    const odd = certificateData(1, {
      title: 'Lease 🏠 東京',
      recipients: [{ ...certificateData(1).recipients[0]!, name: 'Zoë 😀 Ōta' }],
      events: [{ at: '2026-11-23T08:00:00.000Z', action: 'declined', recipientId: 'rcp_1', actor: 'Zoë 😀', ip: '2001:db8::1', userAgent: 'Agent/1 (日本語; 🦊)\n', details: { reason: 'Wrong 金额' } }],
    });
    const t = flat(await pdfText(await render(odd, false)));
    for (const s of ['Lease ? ??', 'Zoë ? ?ta', 'Agent/1 (???; ?)', 'Wrong ??']) expect(t).toContain(s);
  });

  it('wraps a user agent longer than a line without losing a character', async () => {
    const ua = `Agent/${'x'.repeat(400)}`;
    const d = certificateData(1, { events: [{ at: '2026-11-23T08:00:00.000Z', action: 'opened', recipientId: null, actor: null, ip: null, userAgent: ua, details: {} }] });
    expect((await pdfText(await render(d, false))).replace(/\s+/g, '')).toContain(ua);
  });

  it('sets every line as extractable words inside the margins, one baseline per line, the footer last', async () => {
    const pages = await pagesOf(live);
    for (let p = 1; p <= pages; p++) {
      const words = await pdfWords(live, p);
      expect(words.length).toBeGreaterThan(20);
      for (const w of words) {
        expect(w.xMin, w.text).toBeGreaterThanOrEqual(56 - 0.01);
        // Lines are measured with the font's kerning, as pdf-lib measures, and drawn without it, as pdf-lib's
        // drawText draws: a long line can end a point or two into the right margin, never off the page.
        expect(w.xMax, w.text).toBeLessThanOrEqual(595.28 - 56 + 3);
      }
      // Distinct lines are at least a leading apart (12.5 points at 9 points' size): nothing overprints.
      const tops = [...new Set(words.map((w) => w.yMin.toFixed(2)))].map(Number).sort((a, b) => a - b);
      for (let i = 1; i < tops.length; i++) expect(tops[i]! - tops[i - 1]!).toBeGreaterThanOrEqual(12.5 - 0.01);
      expect(words.slice(-8).map((w) => w.text).join(' ')).toBe(`Evidence certificate ${data.certificateId} - page ${p} of ${pages}`);
    }
  });

  it('takes its dates from the request, not the clock, and names esig as producer', async () => {
    const doc = await PDFDocument.load(live, { updateMetadata: false });
    expect(doc.getProducer()).toBe('esig');
    expect(doc.getTitle()).toBe(`Evidence certificate ${data.certificateId}`);
    expect(doc.getCreationDate()?.toISOString()).toBe(data.completedAt);
    expect(doc.getModificationDate()?.toISOString()).toBe(data.completedAt);
  });

  it('produces identical bytes for identical input', async () => {
    expect(Buffer.from(await render(data, false)).equals(Buffer.from(live))).toBe(true);
  });

  it('draws names, titles, user agents and details carrying control characters, unpaired surrogates and noncharacters as "?"', async () => {
    const hostile = (s: string) => `${s}\u0000\u0007\u001b\u0085\ud800\uffff${s}`;
    const d = certificateData(2);
    const data: CertificateData = {
      ...d,
      title: hostile('Title'),
      documents: d.documents.map((x) => ({ ...x, name: hostile('Doc') })),
      recipients: d.recipients.map((r) => ({ ...r, name: hostile('Name'), email: hostile('mail') })),
      events: d.events.map((e) => ({ ...e, actor: hostile('Actor'), userAgent: hostile('Agent'), ip: hostile('IP'), details: { [hostile('key')]: hostile('value') } })),
    };
    const pdf = await render(data, true);
    expect((await qpdfCheck(pdf)).code).toBe(0);
    const t = await pdfText(pdf);
    expect(t).toContain('Title??????Title');
    expect(t).toContain('Agent??????Agent');
    // (pdftotext separates pages with a form feed, \u000c.)
    expect(t).not.toMatch(/[\u0000-\u0008\u000b\u000e-\u001f\u007f-\u009f\uffff]/);
  });
});
