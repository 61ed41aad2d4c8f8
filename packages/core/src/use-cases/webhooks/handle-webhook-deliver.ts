import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '../../task-either.js';
import type { DomainError } from '../../errors.js';
import type { JobOf } from '../../model/job.js';
import type { WebhookDelivery, WebhookEndpoint } from '../../model/webhook.js';
import type { Stores } from '../../ports/stores.js';
import type { WebhookResponse } from '../../ports/webhook-sender.js';
import { createReceiverGate } from '../../receiver-gate.js';
import { DELIVERY_TIMEOUT_MS, DISABLE_AFTER_FAILING_MS, DISABLE_AFTER_FINAL_FAILURES, TEST_EVENT_TYPE, judgeAttempt, outcomeOf, secretsInForce, signatureHeader } from '../../webhook-rules.js';
import type { JobHandler } from '../jobs/job-handler.js';
import { nothingToRecord } from '../jobs/job-handler.js';
import { tenantOf } from '../jobs/load-job-request.js';
import { secretOpener } from './secret-opener.js';
import type { WebhookDeps } from './webhook-deps.js';

/** The secrets that sign now: the current one first, then any still inside its overlap window. */
const signingSecrets = (open: (sealed: string) => string | null, e: WebhookEndpoint, at: string): string[] =>
  secretsInForce(e.secrets, at)
    .map((s) => open(s.sealed))
    .filter((s): s is string => s !== null);

/**
 * `webhook.deliver`: one attempt of one delivery. Outside any transaction: sign and POST (the sender
 * enforces the target rules at connect time). Then, in the job's commit: the attempt in the delivery log
 * and the request log, the delivery's new state, the endpoint's health — disabling it (and cancelling its
 * waiting deliveries) after 5 final failures in a row or 3 days of nothing but failures — and the next
 * attempt's job when the verdict is a retry. A retry keeps the event id and the delivery id.
 *
 * A slow receiver holds only its share of the worker's loops (`WebhookDeps.receiverGate`): past it, the
 * delivery is put off without an attempt (`putOff`), and the loop goes on to other work.
 */
export const handleWebhookDeliver = (deps: WebhookDeps): JobHandler<'webhook.deliver'> => {
  const gate = deps.receiverGate ?? createReceiverGate({ share: 4 });
  const open = secretOpener(deps.secrets);
  return (job) => {
    const tenant = tenantOf(job);
    return pipe(
      // One read for both (one round trip on PostgreSQL): most deliveries are pending and need their endpoint.
      deps.stores.webhookDeliveries.findWithEndpoint(tenant, job.payload.deliveryId),
      TE.chainW((found): TE.TaskEither<DomainError, (tx: Stores) => TE.TaskEither<DomainError, void>> => {
        if (found === null || found.delivery.status !== 'pending') return TE.right(nothingToRecord);
        const { delivery: d, endpoint: e } = found;
        if (e === null || !e.enabled)
          return TE.right((tx: Stores) => pipe(cancel(tx, d, deps.clock.now().toISOString()), TE.map(() => undefined)));
        const now = deps.clock.now();
        // The receiver is its URL: endpoints (of any org) that point at one URL share one share.
        const entry = gate.enter(e.url, now.getTime());
        if (!entry.admitted) return TE.right(putOff(deps, job, d, new Date(now.getTime() + Math.ceil(entry.retryInMs))));
        const attempt = d.attempts + 1;
        const t = Math.floor(now.getTime() / 1000);
        const secrets = signingSecrets(open, e, now.toISOString());
        const headers = {
          'Esig-Signature': signatureHeader(deps.crypto, d.body, secrets, t),
          'Esig-Event-Id': d.eventId,
          'Esig-Event-Type': d.eventType,
          'Esig-Delivery-Id': d.id,
          'Esig-Attempt': String(attempt),
          'Esig-Timestamp': String(t),
        };
        // The gate hears how long the exchange took, also when the sender throws or rejects (a bug: it answers
        // NoAnswer), synchronously or not: a slot never left would hold its receiver to its share for good.
        const sent = () =>
          Promise.resolve()
            .then(() => deps.sender.send({ url: e.url, body: d.body, headers, timeoutMs: DELIVERY_TIMEOUT_MS })())
            .then(
              (r) => (entry.leave(r.durationMs), r),
              (err: unknown) => {
                entry.leave(deps.clock.now().getTime() - now.getTime());
                throw err;
              },
            );
        return pipe(
          TE.fromTask(sent),
          TE.map((response) => record(deps, d, e.id, attempt, response, e.url)),
        );
      }),
    );
  };
};

/**
 * A delivery put off because its receiver is slow and holds its share of the loops: nothing is sent and no
 * attempt counted. This job is done, and a new one for the same attempt falls due `at`; the delivery shows
 * `at` as its next attempt. (The new job's dedupe key names the job it replaces, so it never collides with
 * the key of an attempt's own job.)
 */
const putOff =
  (deps: WebhookDeps, job: JobOf<'webhook.deliver'>, d: WebhookDelivery, at: Date) =>
  (tx: Stores): TE.TaskEither<DomainError, void> =>
    pipe(
      tx.webhookDeliveries.update({ ...d, nextAttemptAt: at.toISOString(), version: d.version + 1 }),
      TE.chainW(() =>
        tx.jobs.enqueue({
          id: deps.ids.next('job'),
          kind: 'webhook.deliver',
          orgId: d.orgId,
          mode: d.mode,
          payload: { deliveryId: d.id },
          runAt: at.toISOString(),
          dedupeKey: `deliver:${d.id}:${d.attempts + 1}:after:${job.id}`,
          createdAt: deps.clock.now().toISOString(),
        }),
      ),
      TE.map(() => undefined),
    );

const cancel = (tx: Stores, d: WebhookDelivery, at: string) =>
  tx.webhookDeliveries.update({ ...d, status: 'cancelled', nextAttemptAt: null, lastAttemptAt: d.lastAttemptAt ?? at, version: d.version + 1 });

const record =
  (deps: WebhookDeps, d: WebhookDelivery, endpointId: string, attempt: number, r: WebhookResponse, url: string) =>
  (tx: Stores): TE.TaskEither<DomainError, void> => {
    const now = deps.clock.now();
    const at = now.toISOString();
    const tenant = { orgId: d.orgId, mode: d.mode };
    const verdict = judgeAttempt(r, attempt, deps.retryScale, deps.random());
    const outcome = outcomeOf(r);
    const next: WebhookDelivery = {
      ...d,
      attempts: attempt,
      status: verdict._tag === 'Succeeded' ? 'succeeded' : verdict._tag === 'FinalFailure' ? 'failed' : 'pending',
      nextAttemptAt: verdict._tag === 'Retry' ? new Date(now.getTime() + verdict.delayMs).toISOString() : null,
      lastAttemptAt: at,
      lastOutcome: outcome,
      version: d.version + 1,
    };
    return pipe(
      tx.webhookDeliveries.appendAttempt({
        id: deps.ids.next('dlv'),
        orgId: d.orgId,
        mode: d.mode,
        deliveryId: d.id,
        endpointId,
        eventId: d.eventId,
        eventType: d.eventType,
        attempt,
        outcome,
        succeeded: verdict._tag === 'Succeeded',
        durationMs: Math.round(r.durationMs),
        responseBody: r._tag === 'Answered' ? r.bodyExcerpt : r.detail.slice(0, 1024),
        createdAt: at,
      }),
      TE.chainW(() =>
        tx.apiLog.append([
          { id: deps.ids.next('log'), orgId: d.orgId, mode: d.mode, kind: 'webhook', method: 'POST', target: url, status: r._tag === 'Answered' ? r.status : null, outcome, durationMs: Math.round(r.durationMs), keyId: null, oauthClientId: null, createdAt: at },
        ]),
      ),
      TE.chainW(() => tx.webhookDeliveries.update(next)),
      TE.chainW(() =>
        verdict._tag === 'Retry'
          ? pipe(
              tx.jobs.enqueue({ id: deps.ids.next('job'), kind: 'webhook.deliver', orgId: d.orgId, mode: d.mode, payload: { deliveryId: d.id }, runAt: next.nextAttemptAt!, dedupeKey: `deliver:${d.id}:${attempt + 1}`, createdAt: at }),
              TE.map(() => undefined),
            )
          : TE.right(undefined),
      ),
      // The endpoint's health. A success resets its run of failures in one statement, which leaves a healthy
      // endpoint untouched (no row lock, so successes to one endpoint do not queue on it). A failure counts
      // under the row lock: concurrent failures to one endpoint queue here, and none is lost. A test delivery
      // counts for nothing: a receiver being set up may refuse a `webhook.test` it does not know, and five such
      // answers disabled the endpoint.
      TE.chainW((): TE.TaskEither<DomainError, void> => {
        if (d.eventType === TEST_EVENT_TYPE) return TE.right(undefined);
        if (verdict._tag === 'Succeeded') return tx.webhookEndpoints.clearFailures(tenant, endpointId, at);
        return pipe(
          tx.webhookEndpoints.findByIdForUpdate(tenant, endpointId),
          TE.chainW((e) => (e === null ? TE.right(undefined) : countFailure(tx, e, verdict._tag, at, now.getTime()))),
        );
      }),
    );
  };

const countFailure = (tx: Stores, e: WebhookEndpoint, verdict: 'Retry' | 'FinalFailure', at: string, nowMs: number): TE.TaskEither<DomainError, void> => {
  const failingSince = e.failingSince ?? at;
  const finals = e.consecutiveFinalFailures + (verdict === 'FinalFailure' ? 1 : 0);
  const reason =
    finals >= DISABLE_AFTER_FINAL_FAILURES
      ? `${finals} deliveries in a row failed for good`
      : nowMs - Date.parse(failingSince) >= DISABLE_AFTER_FAILING_MS
        ? `nothing but failures since ${failingSince}`
        : null;
  const next: WebhookEndpoint = {
    ...e,
    consecutiveFinalFailures: finals,
    failingSince,
    ...(reason !== null && e.enabled ? { enabled: false, disabledReason: reason, disabledAt: at } : {}),
    updatedAt: at,
    version: e.version + 1,
  };
  return pipe(
    tx.webhookEndpoints.update(next),
    TE.chainW(() => (reason !== null && e.enabled ? tx.webhookDeliveries.cancelPending({ orgId: e.orgId, mode: e.mode }, e.id, at) : TE.right(0))),
    TE.map(() => undefined),
  );
};
