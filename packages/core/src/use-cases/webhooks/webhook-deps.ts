import type { Clock } from '../../ports/clock.js';
import type { Crypto } from '../../ports/crypto.js';
import type { IdGenerator } from '../../ports/id-generator.js';
import type { SecretBox } from '../../ports/secret-box.js';
import type { Stores } from '../../ports/stores.js';
import type { UnitOfWork } from '../../ports/unit-of-work.js';
import type { WebhookSender } from '../../ports/webhook-sender.js';
import type { ReceiverGate } from '../../receiver-gate.js';

export interface WebhookDeps {
  readonly stores: Stores;
  readonly uow: UnitOfWork;
  readonly clock: Clock;
  readonly ids: IdGenerator;
  readonly crypto: Crypto;
  readonly secrets: SecretBox;
  readonly sender: WebhookSender;
  /** Multiplies the retry gaps (CONTRACT: ESIG_WEBHOOK_RETRY_SCALE; tests use a tiny value). */
  readonly retryScale: number;
  /** In [0, 1): jitter for retry gaps. */
  readonly random: () => number;
  /**
   * How many deliveries one slow receiver may hold at once in this process (`createReceiverGate`). One gate per
   * worker process, shared by its loops. Default: a share of 4 for the handler made from these deps.
   */
  readonly receiverGate?: ReceiverGate;
}

/** `whsec_` and 43 alphanumerics (≈ 256 bits). */
export const newWebhookSecret = (crypto: WebhookDeps['crypto']) => `whsec_${crypto.randomAlphanumeric(43)}`;
