import type { EventType } from './event.js';
import type { Mode } from './tenant.js';

/** One signing secret of an endpoint, encrypted at rest by the SecretBox. */
export interface WebhookSecret {
  readonly sealed: string;
  readonly createdAt: string;
  /** Set on rotation for the old secret: it still signs deliveries until then (the overlap window). */
  readonly retiresAt: string | null;
}

export interface WebhookEndpoint {
  readonly id: string;
  readonly orgId: string;
  readonly mode: Mode;
  readonly url: string;
  readonly events: readonly EventType[];
  readonly description: string | null;
  readonly enabled: boolean;
  readonly disabledReason: string | null;
  readonly disabledAt: string | null;
  /** Newest first. The first is the current secret; others sign only until their `retiresAt`. */
  readonly secrets: readonly WebhookSecret[];
  /** Deliveries in a row that ended in final failure; a success resets it. */
  readonly consecutiveFinalFailures: number;
  /** The first failed attempt since the last success; null while healthy. */
  readonly failingSince: string | null;
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly version: number;
}

export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed', 'cancelled'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** One event on its way to one endpoint. Its body is fixed at creation: every attempt sends the same bytes. */
export interface WebhookDelivery {
  readonly id: string;
  readonly orgId: string;
  readonly mode: Mode;
  readonly endpointId: string;
  readonly eventId: string;
  readonly eventType: string;
  readonly body: string;
  readonly status: DeliveryStatus;
  readonly attempts: number;
  readonly nextAttemptAt: string | null;
  readonly lastAttemptAt: string | null;
  /** The last attempt's outcome: an HTTP status ("503") or an error kind ("timeout"). */
  readonly lastOutcome: string | null;
  readonly createdAt: string;
  readonly version: number;
}

/** One attempt, as the delivery log shows it. */
export interface DeliveryAttempt {
  readonly id: string;
  readonly orgId: string;
  readonly mode: Mode;
  readonly deliveryId: string;
  readonly endpointId: string;
  readonly eventId: string;
  readonly eventType: string;
  readonly attempt: number;
  /** An HTTP status ("200", "302") or an error kind ("timeout", "tls", "connect", "dns", "refused_target"). */
  readonly outcome: string;
  readonly succeeded: boolean;
  readonly durationMs: number;
  /** The first 1,024 bytes of the response body. */
  readonly responseBody: string;
  readonly createdAt: string;
}

/** One line of the API request log (webhook calls included). */
export interface ApiLogEntry {
  readonly id: string;
  readonly orgId: string;
  readonly mode: Mode;
  readonly kind: 'api' | 'webhook';
  readonly method: string;
  /** The API path, or the webhook URL. */
  readonly target: string;
  readonly status: number | null;
  readonly outcome: string;
  readonly durationMs: number;
  readonly keyId: string | null;
  /** The OAuth client, for a call made with an access token (its `keyId` is the key that consented). */
  readonly oauthClientId: string | null;
  readonly createdAt: string;
}
