import type { CertificateData, Field, FieldType, FieldValue } from '@esig/core';

let n = 0;
/** A field with defaults; coordinates in points from the page's top-left, as the API takes them. */
export const field = (over: Partial<Field> & { documentId: string; recipientId: string; type: FieldType }): Field => ({
  id: `fld_${++n}`,
  page: 1,
  x: 72,
  y: 100,
  width: 200,
  height: 40,
  required: true,
  value: null as FieldValue | null,
  ...over,
});

const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0';

const at = (minutes: number) => new Date(Date.UTC(2026, 10, 23, 8, 0, 0) + minutes * 60_000).toISOString();

/**
 * Certificate content for a request with `signers` signers (each notified, opened, viewed and signed from
 * their own address and client) and two documents.
 */
export const certificateData = (signers = 2, over: Partial<CertificateData> = {}): CertificateData => {
  const recipients = Array.from({ length: signers }, (_, i) => ({
    id: `rcp_${i + 1}`,
    name: `Signer ${i + 1} Example`,
    email: `signer${i + 1}@example.com`,
    role: 'signer' as const,
    authentication: i % 2 === 0 ? 'email_otp' : 'none',
    signedAt: at(10 + i),
    signatureKind: i % 2 === 0 ? ('typed' as const) : ('drawn' as const),
  }));
  const actorOf = (i: number) => `${recipients[i]!.name} <${recipients[i]!.email}>`;
  const events: CertificateData['events'][number][] = [
    { at: at(0), action: 'created', recipientId: null, actor: null, ip: null, userAgent: null, details: {} },
    { at: at(1), action: 'sent', recipientId: null, actor: null, ip: '203.0.113.1', userAgent: 'esig-sdk/1.0', details: {} },
  ];
  recipients.forEach((r, i) => {
    const ua = `${i % 2 === 0 ? CHROME : FIREFOX} signer/${i + 1}`;
    const ip = `198.51.100.${i + 10}`;
    for (const [k, action] of (['notified', 'opened', 'viewed', 'signed'] as const).entries())
      events.push({
        at: at(2 + i + k / 10),
        action,
        recipientId: r.id,
        actor: actorOf(i),
        ip: action === 'notified' ? null : ip,
        userAgent: action === 'notified' ? null : ua,
        details: {},
      });
  });
  events.push({ at: at(30), action: 'completed', recipientId: null, actor: null, ip: null, userAgent: null, details: {} });
  return {
    certificateId: 'coc_01JDCERTIFICATE0000000001',
    requestId: 'req_01JDREQUEST00000000000001',
    title: 'Supply agreement 2027',
    testMode: false,
    requestedSignatureLevel: 'SES',
    createdAt: at(0),
    sentAt: at(1),
    completedAt: at(30),
    documents: [
      { id: 'doc_1', name: 'agreement.pdf', pageCount: 2, sha256: 'a1'.repeat(32) },
      { id: 'doc_2', name: 'annex.pdf', pageCount: 3, sha256: '0f'.repeat(32) },
    ],
    finishedDocumentSha256: 'c3d4'.repeat(16),
    recipients,
    events,
    ...over,
  };
};
