/**
 * One small content model rendered twice, so the text and the HTML part of a mail always say the same
 * thing. Every string in a `MailLayout` is plain text: the HTML renderer escapes all of it, links included.
 */

export type MailBlock =
  | { readonly kind: 'paragraph'; readonly text: string }
  /** Text someone else wrote (the sender's message), set apart from ours. */
  | { readonly kind: 'quote'; readonly label: string; readonly text: string }
  | { readonly kind: 'button'; readonly label: string; readonly href: string }
  | { readonly kind: 'code'; readonly code: string };

export interface MailLayout {
  readonly testMode: boolean;
  readonly subject: string;
  readonly heading: string;
  readonly blocks: readonly MailBlock[];
  readonly footer: string;
}

/** What every test-mode mail says, in both parts. */
export const TEST_NOTICE = 'TEST — not legally binding';
export const TEST_SUBJECT_PREFIX = '[TEST] ';

const HTML_ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Escapes text for HTML element content and double- or single-quoted attribute values. */
export const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c] ?? c);

/**
 * A header-safe one-line version of user input: line breaks and other control characters in a title
 * would otherwise end the Subject header or smuggle in another one.
 */
export const oneLine = (s: string): string => s.replace(/[\u0000-\u001f\u007f\s]+/g, ' ').trim();

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

/** `2026-11-23T08:00:00.000Z` → `23 November 2026, 08:00 UTC`; anything unparseable is shown as given. */
export const formatUtc = (iso: string): string => {
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) return iso;
  const d = new Date(ms);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()}, ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())} UTC`;
};

export const subjectFor = (testMode: boolean, subject: string): string => (testMode ? TEST_SUBJECT_PREFIX : '') + oneLine(subject);

const textBlock = (b: MailBlock): string => {
  switch (b.kind) {
    case 'paragraph':
      return b.text;
    case 'quote':
      return `${b.label}\n${b.text.split(/\r?\n/).map((l) => `> ${l}`).join('\n')}`;
    case 'button':
      // The link alone on its line, never wrapped or shortened, so a plain-text reader can copy it.
      return `${b.label}:\n${b.href}`;
    case 'code':
      return `    ${b.code}`;
  }
};

/** The text part: the same blocks as the HTML part, in the same order. */
export const renderText = (layout: MailLayout): string =>
  [...(layout.testMode ? [`*** ${TEST_NOTICE} ***`] : []), layout.heading, ...layout.blocks.map(textBlock), '--', layout.footer].join('\n\n') + '\n';

const FONT = 'font-family:Helvetica,Arial,sans-serif;';
const P = `margin:0 0 16px 0;${FONT}font-size:15px;line-height:1.5;color:#1f2937;`;

/** Escaped text with its line breaks kept. */
const multiline = (s: string): string => s.split(/\r?\n/).map(escapeHtml).join('<br>');

const htmlBlock = (b: MailBlock): string => {
  switch (b.kind) {
    case 'paragraph':
      return `<p style="${P}">${multiline(b.text)}</p>`;
    case 'quote':
      return (
        `<p style="${P}margin-bottom:4px;">${escapeHtml(b.label)}</p>` +
        `<blockquote style="margin:0 0 16px 0;padding:8px 12px;border-left:4px solid #d1d5db;${FONT}font-size:15px;line-height:1.5;color:#374151;">${multiline(b.text)}</blockquote>`
      );
    case 'button': {
      const href = escapeHtml(b.href);
      return (
        `<p style="margin:24px 0;"><a href="${href}" style="display:inline-block;padding:12px 28px;background:#1d4ed8;color:#ffffff;` +
        `${FONT}font-size:16px;font-weight:bold;text-decoration:none;border-radius:6px;">${escapeHtml(b.label)}</a></p>` +
        `<p style="${P}font-size:13px;color:#4b5563;">If the button does not work, open this link:<br>` +
        `<a href="${href}" style="color:#1d4ed8;word-break:break-all;">${href}</a></p>`
      );
    }
    case 'code':
      return `<p style="margin:16px 0;font-family:Consolas,Menlo,monospace;font-size:28px;font-weight:bold;letter-spacing:6px;color:#111827;">${escapeHtml(b.code)}</p>`;
  }
};

/** The HTML part: a self-contained page, inline styles only, no images or stylesheets from anywhere. */
export const renderHtml = (layout: MailLayout): string => {
  const banner = layout.testMode
    ? `<p style="margin:0 0 16px 0;padding:8px 12px;background:#fef3c7;border:1px solid #f59e0b;${FONT}font-size:14px;font-weight:bold;color:#92400e;">${escapeHtml(TEST_NOTICE)}</p>`
    : '';
  return [
    '<!DOCTYPE html>',
    '<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">',
    `<title>${escapeHtml(layout.subject)}</title></head>`,
    '<body style="margin:0;padding:24px;background:#f3f4f6;">',
    '<table role="presentation" width="100%" cellpadding="0" cellspacing="0" style="max-width:600px;margin:0 auto;background:#ffffff;border-radius:8px;">',
    '<tr><td style="padding:32px;">',
    banner,
    `<h1 style="margin:0 0 24px 0;${FONT}font-size:22px;color:#111827;">${escapeHtml(layout.heading)}</h1>`,
    ...layout.blocks.map(htmlBlock),
    `<hr style="border:none;border-top:1px solid #e5e7eb;margin:24px 0 16px 0;">`,
    `<p style="${P}font-size:12px;color:#6b7280;">${multiline(layout.footer)}</p>`,
    '</td></tr></table>',
    '</body></html>',
    '',
  ].join('\n');
};
