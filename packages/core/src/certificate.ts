import type { Document } from './model/document.js';
import type { EvidenceEntry } from './model/evidence.js';
import type { SignatureRequest } from './model/signature-request.js';

/**
 * The evidence certificate's content, built from the request, its documents and its audit trail. The PDF
 * and the JSON form (`Accept: application/json`) are two renderings of this one value.
 */
export interface CertificateData {
  readonly certificateId: string;
  readonly requestId: string;
  readonly title: string;
  readonly testMode: boolean;
  /** Only ever the requested level: no certificate states an achieved signature level. */
  readonly requestedSignatureLevel: 'SES';
  readonly createdAt: string;
  readonly sentAt: string | null;
  readonly completedAt: string | null;
  readonly documents: ReadonlyArray<{ readonly id: string; readonly name: string; readonly pageCount: number; readonly sha256: string }>;
  readonly finishedDocumentSha256: string;
  readonly recipients: ReadonlyArray<{
    readonly id: string;
    readonly name: string;
    readonly email: string;
    readonly role: 'signer' | 'cc';
    readonly authentication: string;
    readonly signedAt: string | null;
    readonly signatureKind: 'typed' | 'drawn' | null;
  }>;
  /** Every evidence entry in order, with UTC time, IP address and user agent. */
  readonly events: ReadonlyArray<{
    readonly at: string;
    readonly action: string;
    readonly recipientId: string | null;
    readonly actor: string | null;
    readonly ip: string | null;
    readonly userAgent: string | null;
    readonly details: Readonly<Record<string, string>>;
  }>;
}

export const buildCertificateData = (
  req: SignatureRequest,
  documents: readonly Document[],
  evidence: readonly EvidenceEntry[],
  finishedSha256: string,
): CertificateData => {
  const byId = new Map(req.recipients.map((r) => [r.id, r]));
  const docs = req.documentIds.map((id) => documents.find((d) => d.id === id)).filter((d): d is Document => d !== undefined);
  return {
    certificateId: req.certificateId ?? '',
    requestId: req.id,
    title: req.title,
    testMode: req.mode === 'test',
    requestedSignatureLevel: req.requestedSignatureLevel,
    createdAt: req.createdAt,
    sentAt: req.sentAt,
    completedAt: req.completedAt,
    documents: docs.map((d) => ({ id: d.id, name: d.name, pageCount: d.pageCount, sha256: d.sha256 })),
    finishedDocumentSha256: finishedSha256,
    recipients: req.recipients.map((r) => ({
      id: r.id,
      name: `${r.firstName} ${r.lastName}`,
      email: r.email,
      role: r.role,
      authentication: r.authentication,
      signedAt: r.signedAt,
      signatureKind: r.signature?.kind ?? null,
    })),
    events: [...evidence]
      .sort((a, b) => (a.at === b.at ? (a.id < b.id ? -1 : 1) : a.at < b.at ? -1 : 1))
      .map((e) => {
        const who = e.recipientId ? byId.get(e.recipientId) : undefined;
        return {
          at: e.at,
          action: e.action,
          recipientId: e.recipientId,
          actor: who ? `${who.firstName} ${who.lastName} <${who.email}>` : null,
          ip: e.ip,
          userAgent: e.userAgent,
          details: e.details,
        };
      }),
  };
};
