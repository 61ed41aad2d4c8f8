import type { CertificateData } from '@esig/core';
import { deflateSync } from 'node:zlib';
import type { PDFFont, PDFPage } from 'pdf-lib';
import { PDFDocument, PDFName, StandardFonts } from 'pdf-lib';
import { encodable } from './fonts.js';
import { drawTestBanner } from './page-space.js';
import { saveFast } from './save.js';
import type { StandardFontMetrics } from './text-metrics.js';
import { standardMetrics } from './text-metrics.js';

const A4: [number, number] = [595.28, 841.89];
const MARGIN = 56;
/** Below the test banner, with air to spare. */
const TOP = 64;
const FOOTER = 36;
const LABEL_WIDTH = 130;
const SIZE = 9;
const LEADING = 12.5;

const ACTION_LABELS: Readonly<Record<string, string>> = {
  created: 'Request created',
  sent: 'Request sent',
  notified: 'Invitation e-mailed',
  reminded: 'Reminder e-mailed',
  opened: 'Signing link opened',
  viewed: 'Document viewed',
  otp_sent: 'Identification code e-mailed',
  authentication_failed: 'Identification failed',
  authenticated: 'Identification passed',
  signed: 'Signed',
  declined: 'Declined',
  completed: 'Request completed',
  sealed: 'Documents sealed',
  expired: 'Request expired',
  cancelled: 'Request cancelled',
};

const AUTHENTICATION_LABELS: Readonly<Record<string, string>> = {
  none: 'None (signing link only)',
  email_otp: 'One-time code e-mailed to the recipient',
  access_code: 'Access code set by the sender',
};

/** `2026-11-23T08:00:00.000Z` → `2026-11-23 08:00:00 UTC`; anything unparseable is shown as given. */
export const formatUtc = (iso: string | null, none = 'not recorded'): string => {
  if (iso === null) return none;
  const t = Date.parse(iso);
  return Number.isNaN(t) ? iso : `${new Date(t).toISOString().slice(0, 19).replace('T', ' ')} UTC`;
};

/**
 * Greedy word wrap of encodable text to `width` points; a word longer than a line (a digest, a user agent
 * without spaces) is broken between characters. Widths are pdf-lib's, kerning included (see
 * StandardFontMetrics), summed as a line grows rather than measured again for each candidate.
 */
export const wrap = (text: string, font: PDFFont, size: number, width: number): string[] => {
  const m = standardMetrics(font);
  const scale = size / 1000;
  const fits = (units: number) => units * scale <= width;
  const lines: string[] = [];
  let line = '';
  let lineUnits = 0;
  for (const word of text.split(' ').filter((w) => w.length > 0)) {
    const wordUnits = m.units(word);
    if (line) {
      // `${line} ${word}`: the two parts, the space, and the kerning on each side of it.
      const candidate = lineUnits + m.kern(line[line.length - 1]!, ' ') + m.width(' ') + m.kern(' ', word[0]!) + wordUnits;
      if (fits(candidate)) {
        line = `${line} ${word}`;
        lineUnits = candidate;
        continue;
      }
      lines.push(line);
      line = '';
    }
    if (fits(wordUnits)) {
      line = word;
      lineUnits = wordUnits;
      continue;
    }
    // Character by character, each at its own width (no kerning), as the line is filled.
    let chunkWidth = 0;
    for (const ch of word) {
      const w = m.width(ch) * scale;
      if (line && chunkWidth + w > width) {
        lines.push(line);
        line = '';
        chunkWidth = 0;
      }
      line += ch;
      chunkWidth += w;
    }
    lineUnits = m.units(line);
  }
  if (line) lines.push(line);
  return lines.length > 0 ? lines : [''];
};

/** A number in a content stream: at most three decimals (a thousandth of a point), no exponent. */
const num = (n: number): string => String(Math.round(n * 1000) / 1000);

/** A font of the certificate: its resource name on every page, and its metrics. */
interface CertFont {
  readonly font: PDFFont;
  readonly key: string;
  readonly metrics: StandardFontMetrics;
}

/**
 * One page's text as content operators, written by hand: one text object, the font and colour set only when
 * they change, each line placed by its text matrix and shown as the hexadecimal string of its WinAnsi codes
 * — what pdf-lib's `drawText` writes per line, without its `q`/`Q`, its per-call font lookup on the page and
 * its re-encoding.
 */
class PageText {
  private readonly ops: string[] = [];
  private font: CertFont | null = null;
  private size = 0;
  private colour = '';

  constructor(readonly page: PDFPage) {}

  show(text: string, x: number, y: number, font: CertFont, size: number, colour: string): void {
    if (text.length === 0) return;
    if (font !== this.font || size !== this.size) {
      this.ops.push(`/${font.key} ${num(size)} Tf`);
      this.font = font;
      this.size = size;
    }
    if (colour !== this.colour) {
      this.ops.push(`${colour} rg`);
      this.colour = colour;
    }
    this.ops.push(`1 0 0 1 ${num(x)} ${num(y)} Tm <${font.metrics.hex(text)}> Tj`);
  }

  /** Adds the operators to the page as one content stream (compressed by node:zlib), with the fonts it names. */
  finish(doc: PDFDocument, fonts: readonly CertFont[]): void {
    const ctx = doc.context;
    const contents = Buffer.from(`BT\n${this.ops.join('\n')}\nET\n`, 'latin1');
    this.page.node.addContentStream(ctx.register(ctx.stream(deflateSync(contents), { Filter: 'FlateDecode' })));
    for (const f of fonts) this.page.node.setFontDictionary(PDFName.of(f.key), f.font.ref);
  }
}

const BLACK = '0 0 0';
const GREY = '0.35 0.35 0.35';

/** A top-to-bottom writer over as many A4 pages as the content needs. */
class Layout {
  readonly pages: PageText[] = [];
  private page!: PageText;
  private y = 0;
  private readonly contentWidth = A4[0] - 2 * MARGIN;

  constructor(
    private readonly doc: PDFDocument,
    private readonly regular: CertFont,
    private readonly bold: CertFont,
  ) {
    this.newPage();
  }

  private newPage(): void {
    this.page = new PageText(this.doc.addPage(A4));
    this.pages.push(this.page);
    this.y = A4[1] - TOP;
  }

  /** Starts a new page unless `height` points remain above the footer. */
  private room(height: number): void {
    if (this.y - height < FOOTER + 12) this.newPage();
  }

  private draw(text: string, x: number, font: CertFont, size = SIZE): void {
    this.page.show(text, x, this.y, font, size, BLACK);
  }

  title(text: string): void {
    this.draw(text, MARGIN, this.bold, 20);
    this.y -= 30;
  }

  heading(text: string): void {
    this.y -= 8;
    this.room(16 + 3 * LEADING);
    this.draw(text, MARGIN, this.bold, 12);
    this.y -= 18;
  }

  /** A paragraph of user or fixed text, wrapped; `bold` for an entry's first line. */
  paragraph(text: string, o: { bold?: boolean; indent?: number; keepWith?: number } = {}): void {
    const font = o.bold ? this.bold : this.regular;
    const indent = o.indent ?? 0;
    const lines = wrap(encodable(font.font, text), font.font, SIZE, this.contentWidth - indent);
    this.room(LEADING * (lines.length + (o.keepWith ?? 0)));
    for (const l of lines) {
      this.room(LEADING);
      this.draw(l, MARGIN + indent, font);
      this.y -= LEADING;
    }
  }

  /** A label in bold and its value wrapped in the column beside it. */
  row(label: string, value: string, indent = 0): void {
    const lines = wrap(encodable(this.regular.font, value), this.regular.font, SIZE, this.contentWidth - indent - LABEL_WIDTH);
    this.room(LEADING * Math.min(lines.length, 3));
    this.draw(encodable(this.bold.font, label), MARGIN + indent, this.bold);
    for (const l of lines) {
      this.room(LEADING);
      this.draw(l, MARGIN + indent + LABEL_WIDTH, this.regular);
      this.y -= LEADING;
    }
  }

  gap(points: number): void {
    this.y -= points;
  }
}

/** Builds the evidence certificate PDF; throws pdf-lib's errors on failure. */
export const buildCertificate = async (data: CertificateData, testModeParam: boolean): Promise<Uint8Array> => {
  // A certificate of a test request must never look binding, whichever of the two says so.
  const testMode = testModeParam || data.testMode;
  const doc = await PDFDocument.create({ updateMetadata: false });
  const issued = Date.parse(data.completedAt ?? data.createdAt);
  doc.setTitle(`Evidence certificate ${data.certificateId}`);
  doc.setSubject(`Signature request ${data.requestId}`);
  doc.setProducer('esig');
  doc.setCreator('esig');
  doc.setLanguage('en');
  if (!Number.isNaN(issued)) {
    doc.setCreationDate(new Date(issued));
    doc.setModificationDate(new Date(issued));
  }
  const font = async (name: StandardFonts, key: string): Promise<CertFont> => {
    const f = await doc.embedFont(name);
    return { font: f, key, metrics: standardMetrics(f) };
  };
  const regular = await font(StandardFonts.Helvetica, 'F1');
  const bold = await font(StandardFonts.HelveticaBold, 'F2');
  const out = new Layout(doc, regular, bold);

  out.title('Evidence certificate');
  out.row('Certificate id', data.certificateId);
  out.row('Request id', data.requestId);
  out.row('Title', data.title);
  out.row('Mode', testMode ? 'Test - not legally binding' : 'Live');
  out.paragraph(`Requested signature level: ${data.requestedSignatureLevel} (simple electronic signature)`, { bold: true });
  out.row('Created', formatUtc(data.createdAt));
  out.row('Sent', formatUtc(data.sentAt, 'not sent'));
  out.row('Completed', formatUtc(data.completedAt, 'not completed'));

  out.heading('Documents');
  data.documents.forEach((d, i) => {
    out.paragraph(`${i + 1}. ${d.name}`, { bold: true, keepWith: 2 });
    out.row('Document id', d.id, 12);
    out.row('Pages', String(d.pageCount), 12);
    out.row('SHA-256', d.sha256, 12);
    out.gap(4);
  });
  out.paragraph('Finished document (all documents above, with the values and signatures stamped)', { bold: true, keepWith: 1 });
  out.row('SHA-256', data.finishedDocumentSha256, 12);

  out.heading('Recipients');
  data.recipients.forEach((r, i) => {
    out.paragraph(`${i + 1}. ${r.name}`, { bold: true, keepWith: 3 });
    out.row('E-mail', r.email, 12);
    out.row('Role', r.role, 12);
    out.row('Identification', AUTHENTICATION_LABELS[r.authentication] ?? r.authentication, 12);
    out.row('Signature', r.signatureKind ?? 'none', 12);
    out.row('Signed at', formatUtc(r.signedAt, r.role === 'cc' ? 'not applicable (copy recipient)' : 'not signed'), 12);
    out.gap(4);
  });

  out.heading(`Events (${data.events.length}, in order; times in UTC)`);
  data.events.forEach((e, i) => {
    const label = ACTION_LABELS[e.action];
    out.paragraph(`${i + 1}. ${formatUtc(e.at)}   ${label ? `${label} (${e.action})` : e.action}`, { bold: true, keepWith: 3 });
    out.row('Actor', e.actor ?? (e.recipientId ? `recipient ${e.recipientId}` : 'no recipient (the sender or esig)'), 12);
    out.row('IP address', e.ip ?? 'not recorded', 12);
    out.row('User agent', e.userAgent ?? 'not recorded', 12);
    for (const [k, v] of Object.entries(e.details)) out.row(k, v, 12);
    out.gap(4);
  });

  const pages = out.pages;
  pages.forEach((page, i) => {
    const text = encodable(regular.font, `Evidence certificate ${data.certificateId} - page ${i + 1} of ${pages.length}`);
    page.show(text, MARGIN, FOOTER - 12, regular, 8, GREY);
    page.finish(doc, [regular, bold]);
    // After the text, as before: the banner lies over it.
    if (testMode) drawTestBanner(page.page, bold.font);
  });
  return saveFast(doc);
};
