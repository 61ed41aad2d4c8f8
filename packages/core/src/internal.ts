/**
 * @esig/core/internal: the building blocks of the use cases — the state machine, the idempotency decision,
 * cursors, records, mail templates, webhook delivery rules, certificate data. esig's own adapters and tests
 * use them. They change whenever the use cases need them to: no semver promise. Build on the root entry
 * (`@esig/core`) instead where you can.
 *
 * @packageDocumentation
 */
export * from './state-machine.js';
export { decideIdempotency } from './idempotency.js';
export type { IdempotencyDecision } from './idempotency.js';
export { decodeCursor, encodeCursor, isValidLimit, toEnvelope } from './pagination.js';
export type { CursorContext, CursorPayload } from './pagination.js';
export * from './use-cases/policy.js';
export * from './use-cases/list-page.js';
export * from './use-cases/issue-api-key.js';
export * from './use-cases/signing/records.js';
export * from './use-cases/signing/signing-session.js';
export * from './use-cases/signing/signer-step.js';
export * from './use-cases/signing/adopted-signature.js';
export { insertSigningLink } from './use-cases/signing/issue-signing-link.js';
export * from './use-cases/jobs/artifacts.js';
export * from './use-cases/jobs/load-job-request.js';
export * from './use-cases/jobs/send-mail-once.js';
export { mintSigningLink } from './use-cases/jobs/handle-invitation-mail.js';
export { completedEventId } from './use-cases/jobs/handle-seal.js';
export { newWebhookSecret } from './use-cases/webhooks/webhook-deps.js';
export { MAX_OPENED_SECRETS, secretOpener } from './use-cases/webhooks/secret-opener.js';
export * from './webhook-rules.js';
export * from './certificate.js';
export * from './mail/render.js';
export * from './mail/templates.js';
