import type { Mode } from './tenant.js';

export const REQUEST_STATUSES = ['DRAFT', 'SENT', 'COMPLETED', 'DECLINED', 'EXPIRED', 'CANCELLED'] as const;
export type RequestStatus = (typeof REQUEST_STATUSES)[number];

/** Statuses from which no command leads anywhere. */
export const TERMINAL_REQUEST_STATUSES: readonly RequestStatus[] = ['COMPLETED', 'DECLINED', 'EXPIRED', 'CANCELLED'];

export const RECIPIENT_STATUSES = ['PENDING', 'NOTIFIED', 'OPENED', 'VIEWED', 'SIGNED', 'DECLINED'] as const;
export type RecipientStatus = (typeof RECIPIENT_STATUSES)[number];

export const RECIPIENT_ROLES = ['signer', 'cc'] as const;
export type RecipientRole = (typeof RECIPIENT_ROLES)[number];

export const AUTHENTICATION_METHODS = ['none', 'email_otp', 'access_code'] as const;
export type AuthenticationMethod = (typeof AUTHENTICATION_METHODS)[number];

export const FIELD_TYPES = ['signature', 'initials', 'date_signed', 'text', 'checkbox', 'name', 'email'] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

export const SIGNING_ORDERS = ['parallel', 'sequential'] as const;
export type SigningOrder = (typeof SIGNING_ORDERS)[number];

export type SignatureLevel = 'SES';

export interface Recipient {
  readonly id: string;
  readonly email: string;
  readonly firstName: string;
  readonly lastName: string;
  readonly role: RecipientRole;
  /** 1-based position; decides who is invited next under sequential signing. */
  readonly order: number;
  readonly authentication: AuthenticationMethod;
  /** Hash of the sender-set access code when `authentication` is `access_code`; never shown. */
  readonly accessCodeHash: string | null;
  readonly status: RecipientStatus;
  readonly signedAt: string | null;
  readonly declinedAt: string | null;
  readonly declineReason: string | null;
  /** When identification (`email_otp` or `access_code`) was passed; null until then, or when none is asked. */
  readonly authenticatedAt: string | null;
  /** The outstanding e-mailed code, stored as a hash; null when none is pending. */
  readonly otp: PendingOtp | null;
  /**
   * Failed identification attempts; at MAX_AUTH_ATTEMPTS the recipient is locked out. A new code mailed to
   * the address lifts the lock-out (only the real recipient can read it).
   */
  readonly authFailures: number;
  /** When codes were mailed within the last OTP_SEND_WINDOW_MS, oldest first: the per-recipient limit. */
  readonly otpSentAt: readonly string[];
  /** What the signer adopted as signature: typed text, or a drawn image as a PNG data URL. */
  readonly signature: AdoptedSignature | null;
}

export interface PendingOtp {
  readonly codeHash: string;
  readonly expiresAt: string;
}

export interface AdoptedSignature {
  readonly kind: 'typed' | 'drawn';
  readonly value: string;
}

/**
 * Bounds on a drawn signature's image, checked from its header before it is decoded: a signing pad draws
 * 600 × 200, a phone at three device pixels per point about 1,800 × 600. Decoded RGBA stays under 17 MB.
 */
export const SIGNATURE_IMAGE_LIMITS = { maxSide: 4096, maxPixels: 4_194_304 } as const;

/** Identification attempts before a recipient is locked (CONTRACT: 5 tries then locked). */
export const MAX_AUTH_ATTEMPTS = 5;
/** Lifetime of an e-mailed code. */
export const OTP_TTL_MS: number = 10 * 60 * 1000;
/** At most OTP_SEND_LIMIT codes are mailed to one recipient within OTP_SEND_WINDOW_MS (a mail flood is refused). */
export const OTP_SEND_LIMIT = 3;
export const OTP_SEND_WINDOW_MS: number = 10 * 60 * 1000;

export type FieldValue = string | boolean;

export interface Field {
  readonly id: string;
  readonly documentId: string;
  readonly recipientId: string;
  readonly type: FieldType;
  /** 1-based page number. */
  readonly page: number;
  /** PDF points, origin top-left of the page. */
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
  readonly required: boolean;
  readonly value: FieldValue | null;
}

/** The aggregate: a request with its recipients and fields, changed only through `transition`. */
export interface SignatureRequest {
  readonly id: string;
  readonly orgId: string;
  readonly mode: Mode;
  readonly title: string;
  readonly message: string | null;
  readonly status: RequestStatus;
  readonly documentIds: readonly string[];
  readonly recipients: readonly Recipient[];
  readonly fields: readonly Field[];
  readonly signingOrder: SigningOrder;
  readonly requestedSignatureLevel: SignatureLevel;
  readonly expiresAt: string | null;
  readonly createdAt: string;
  readonly sentAt: string | null;
  readonly completedAt: string | null;
  readonly cancelledAt: string | null;
  readonly declinedAt: string | null;
  readonly expiredAt: string | null;
  readonly certificateId: string | null;
  /**
   * SHA-256 of the finished PDF, set once the worker has stored the finished document and the certificate
   * (sealing), when the request becomes COMPLETED. A SENT request whose signers have all signed is being sealed.
   */
  readonly finishedSha256: string | null;
  /** Optimistic-concurrency counter: the store refuses an update whose expected version is stale. */
  readonly version: number;
}

export const isTerminal = (s: RequestStatus): boolean => TERMINAL_REQUEST_STATUSES.includes(s);
