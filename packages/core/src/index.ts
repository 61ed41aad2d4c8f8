/**
 * @esig/core: the electronic-signature domain, pure. Use cases (one per module) take their ports as
 * arguments; write use cases return a `Command` that `execute` (or your own transaction) runs. Everything
 * exported here is the stable surface; `@esig/core/internal` holds the building blocks esig's own adapters
 * and tests use, with no stability promise.
 *
 * @packageDocumentation
 */

// ---- Errors ------------------------------------------------------------------------------------------
export * from './errors.js';
export * from './describe-error.js';
export { unstorableText } from './storable-text.js';

// ---- The model -----------------------------------------------------------------------------------------
export * from './model/tenant.js';
export * from './model/scopes.js';
export * from './model/principal.js';
export * from './model/api-key.js';
export type * from './model/oauth.js';
export * from './model/document.js';
export * from './model/signature-request.js';
export * from './model/event.js';
export * from './model/evidence.js';
export * from './model/job.js';
export * from './model/mail.js';
export * from './model/webhook.js';
export type { CertificateData } from './certificate.js';

// ---- Ports (what adapters implement) -------------------------------------------------------------------
export type * from './ports/clock.js';
export type * from './ports/id-generator.js';
export type * from './ports/crypto.js';
export type * from './ports/secret-box.js';
export type * from './ports/store-result.js';
export type * from './ports/stores.js';
export type * from './ports/unit-of-work.js';
export type * from './ports/document-store.js';
export type * from './ports/document-content-store.js';
export { isStaged, stagedContent, writingWhole } from './ports/document-content-store.js';
export type * from './ports/signature-request-store.js';
export type * from './ports/api-key-store.js';
export type * from './ports/oauth-store.js';
export type * from './ports/client-metadata-fetcher.js';
export type * from './ports/org-store.js';
export type * from './ports/idempotency-store.js';
export { MAX_PURGE_BATCH } from './ports/idempotency-store.js';
export type * from './ports/event-outbox.js';
export type * from './ports/job-queue.js';
export type * from './ports/signing-link-store.js';
export type * from './ports/embed-session-store.js';
export type * from './ports/evidence-store.js';
export type * from './ports/test-mailbox-store.js';
export type * from './ports/webhook-endpoint-store.js';
export type * from './ports/webhook-delivery-store.js';
export type * from './ports/api-log-store.js';
export type * from './ports/rate-limiter.js';
export type * from './ports/key-admission.js';
export type * from './ports/pdf-inspector.js';
export type * from './ports/document-renderer.js';
export type * from './ports/stamp-preflight.js';
export type * from './ports/mail-transport.js';
export type * from './ports/webhook-sender.js';
export * from './compose-stores.js';
export * from './compose-key-admission.js';
/** The sliding-window arithmetic a `RateLimiter` adapter decides with (see @esig/testkit's rate limiter contract). */
export * as rateLimit from './rate-limit.js';

// ---- Running use cases -----------------------------------------------------------------------------------
export * from './use-cases/command.js';
export * from './use-cases/purge-idempotency-records.js';
export { IDEMPOTENCY_LOCK_MS, IDEMPOTENCY_TTL_MS, canonicalJson, fingerprintSource, isValidIdempotencyKey } from './idempotency.js';
export type { FingerprintInput } from './idempotency.js';
export { DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT } from './pagination.js';
export type { CursorSigner, ListEnvelope, PageInfo, SortOrder } from './pagination.js';
export type { PageRequest } from './use-cases/list-page.js';

// ---- API keys ------------------------------------------------------------------------------------------
export * from './use-cases/authenticate.js';
export * from './use-cases/admit-api-key.js';
export type { IssuedKey } from './use-cases/issue-api-key.js';
export * from './use-cases/bootstrap-key.js';
export * from './use-cases/create-api-key.js';
export * from './use-cases/list-api-keys.js';
export * from './use-cases/revoke-api-key.js';

// ---- OAuth 2.1 authorization server (for the tool-protocol server) ------------------------------------
export * from './use-cases/oauth/oauth-error.js';
export * from './use-cases/oauth/rules.js';
export * from './use-cases/oauth/register-oauth-client.js';
export * from './use-cases/oauth/purge-unused-oauth-clients.js';
export * from './use-cases/purge-staged-content.js';
export * from './use-cases/oauth/resolve-oauth-client.js';
export * from './use-cases/oauth/authorization-request.js';
export * from './use-cases/oauth/issue-authorization-code.js';
export * from './use-cases/oauth/issue-tokens.js';
export * from './use-cases/oauth/exchange-authorization-code.js';
export * from './use-cases/oauth/refresh-access-token.js';
export * from './use-cases/oauth/revoke-oauth-token.js';
export * from './use-cases/oauth/manage-oauth-grants.js';

// ---- Documents and signature requests ------------------------------------------------------------------
export * from './use-cases/upload-document.js';
export * from './use-cases/get-document.js';
export * from './use-cases/list-documents.js';
export * from './use-cases/create-signature-request.js';
export * from './use-cases/add-recipient.js';
export * from './use-cases/add-field.js';
export * from './use-cases/send-signature-request.js';
export * from './use-cases/cancel-signature-request.js';
export * from './use-cases/remind-signature-request.js';
export * from './use-cases/get-signature-request.js';
export * from './use-cases/list-signature-requests.js';
export * from './use-cases/get-signed-artifacts.js';
export * from './use-cases/list-events.js';
export * from './use-cases/list-api-log.js';
export * from './use-cases/test-mailbox.js';

// ---- Signing (as the recipient, with a link's token) ---------------------------------------------------
export { issueSigningLink } from './use-cases/signing/issue-signing-link.js';
export type { IssuedSigningLink } from './use-cases/signing/issue-signing-link.js';
export type { SignerView } from './use-cases/signing/signing-session.js';
export type { SignerDeps } from './use-cases/signing/signer-step.js';
export { signingLinkCredential } from './use-cases/signing/signer-step.js';
export * from './use-cases/signing/open-signing-link.js';
export * from './use-cases/signing/view-agreement.js';
export * from './use-cases/signing/sign-as-recipient.js';
export * from './use-cases/signing/decline-as-recipient.js';
export * from './use-cases/signing/request-signer-otp.js';
export * from './use-cases/signing/authenticate-signer.js';
export * from './use-cases/signing/get-signing-document.js';

// ---- Embedded signing (the signing page inside the caller's own web page) ------------------------------
export * from './use-cases/embed/create-embedded-session.js';
export * from './use-cases/embed/open-embedded-session.js';
export { embedOriginProblem } from './use-cases/embed/embed-origin.js';

// ---- Background jobs -----------------------------------------------------------------------------------
export { jobFailure, nothingToRecord, releaseOf, withRelease } from './use-cases/jobs/job-handler.js';
export type { JobFailure, JobHandler, JobHandlers, ReleasingCommand } from './use-cases/jobs/job-handler.js';
export * from './use-cases/jobs/job-handlers.js';
export * from './use-cases/jobs/run-job.js';
export * from './use-cases/jobs/run-due-jobs.js';
export { handleInvitationMail } from './use-cases/jobs/handle-invitation-mail.js';
export type { MailJobDeps } from './use-cases/jobs/handle-invitation-mail.js';
export * from './use-cases/jobs/handle-completed-mail.js';
export { handleSeal } from './use-cases/jobs/handle-seal.js';
export type { SealDeps } from './use-cases/jobs/handle-seal.js';
export * from './use-cases/jobs/handle-expire.js';
export * from './use-cases/jobs/handle-auto-remind.js';
export * from './use-cases/jobs/list-jobs.js';
export * from './use-cases/jobs/retry-jobs.js';

// ---- Webhooks ------------------------------------------------------------------------------------------
export {
  DELIVERY_TIMEOUT_MS,
  DISABLE_AFTER_FAILING_MS,
  DISABLE_AFTER_FINAL_FAILURES,
  MAX_DELIVERY_ATTEMPTS,
  MAX_INLINE_FANOUT,
  RESPONSE_EXCERPT_BYTES,
  RETRY_GAPS_MS,
  SECRET_OVERLAP_MS,
  TEST_EVENT_TYPE,
} from './webhook-rules.js';
export { createReceiverGate } from './receiver-gate.js';
export type { ReceiverGate, ReceiverGateOptions, GateEntry } from './receiver-gate.js';
export type { WebhookDeps } from './use-cases/webhooks/webhook-deps.js';
export * from './use-cases/webhooks/create-webhook-endpoint.js';
export * from './use-cases/webhooks/get-webhook-endpoint.js';
export * from './use-cases/webhooks/list-webhook-endpoints.js';
export * from './use-cases/webhooks/update-webhook-endpoint.js';
export * from './use-cases/webhooks/delete-webhook-endpoint.js';
export * from './use-cases/webhooks/rotate-webhook-secret.js';
export * from './use-cases/webhooks/test-webhook-endpoint.js';
export * from './use-cases/webhooks/resend-webhook-delivery.js';
export * from './use-cases/webhooks/list-webhook-deliveries.js';
export * from './use-cases/webhooks/handle-webhook-dispatch.js';
export * from './use-cases/webhooks/handle-webhook-deliver.js';
