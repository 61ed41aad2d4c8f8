import type { Mode } from './tenant.js';

export const EVIDENCE_ACTIONS = [
  'created', 'sent', 'notified', 'reminded', 'opened', 'viewed', 'otp_sent', 'authentication_failed', 'authenticated',
  'signed', 'declined', 'completed', 'sealed', 'expired', 'cancelled',
] as const;
export type EvidenceAction = (typeof EVIDENCE_ACTIONS)[number];

/**
 * One entry of a request's audit trail, as the evidence certificate lists it: who did what, when, from
 * which address and client. Unlike events, evidence may hold an IP address; it never leaves through
 * webhooks.
 */
export interface EvidenceEntry {
  readonly id: string;
  readonly orgId: string;
  readonly mode: Mode;
  readonly requestId: string;
  readonly recipientId: string | null;
  readonly action: EvidenceAction;
  readonly at: string;
  readonly ip: string | null;
  readonly userAgent: string | null;
  /** Short facts (a document digest, a decline reason); never field values. */
  readonly details: Readonly<Record<string, string>>;
}

/** Where a signer-side call came from, recorded with every signer action. */
export interface ClientInfo {
  readonly ip: string | null;
  readonly userAgent: string | null;
}
