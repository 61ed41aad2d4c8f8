import * as E from 'fp-ts/lib/Either.js';
import * as TE from '../task-either.js';
import { pipe } from 'fp-ts/lib/function.js';
import type { DomainError, FieldProblem } from '../errors.js';
import { insufficientScope, invalidState, notFound, rateLimited, validationFailed } from '../errors.js';
import type { Principal } from '../model/principal.js';
import type { ApiScope } from '../model/scopes.js';
import { hasScope } from '../model/scopes.js';
import { autoRemindJobPrefix, expireJobKey } from '../model/job.js';
import type { SignatureRequest } from '../model/signature-request.js';
import { isTerminal } from '../model/signature-request.js';
import type { RequestCommand, TransitionError } from '../state-machine.js';
import { transition } from '../state-machine.js';
import type { Stores } from '../ports/stores.js';

/** Refuses a principal that lacks `scope`. Use cases check it themselves, so embedders get it too. */
export const requireScope = (p: Principal, scope: ApiScope): TE.TaskEither<DomainError, void> =>
  hasScope(p.scopes, scope) ? TE.right(undefined) : TE.left(insufficientScope(scope));

/** Collects input problems; Right when there are none. */
export const check = (problems: ReadonlyArray<FieldProblem | null>): TE.TaskEither<DomainError, void> => {
  const found = problems.filter((p): p is FieldProblem => p !== null);
  return found.length === 0 ? TE.right(undefined) : TE.left(validationFailed(found));
};

export const fromTransitionError = (e: TransitionError): DomainError => {
  switch (e._tag) {
    case 'InvalidTransition':
      return invalidState(e.detail);
    case 'InvalidCommand':
      return validationFailed([{ path: e.path, message: e.detail }], e.detail);
    case 'TooSoon':
      return rateLimited(e.retryAfterS);
  }
};

/**
 * Loads a request of the principal's tenant; another tenant's request is simply not found. `forChange`
 * (inside a transaction that will change it) takes its row lock, so concurrent changes queue.
 */
export const loadRequest = (tx: Stores, p: Principal, id: string, forChange = true): TE.TaskEither<DomainError, SignatureRequest> =>
  pipe(
    forChange ? tx.signatureRequests.findByIdForUpdate(p.tenant, id) : tx.signatureRequests.findById(p.tenant, id),
    TE.chainW((r) => (r === null ? TE.left(notFound('signature_request', id)) : TE.right(r))),
  );

/**
 * A sent request that has just ended (completed, declined, cancelled, expired) takes its scheduled jobs with it:
 * its expiry and its next automatic reminder would only run later to find nothing to do. The ones a worker holds
 * now are left to finish (see `JobQueue.cancelWaiting`), among them the expiry whose run ends the request.
 */
const cancelSchedule = (tx: Stores, r: SignatureRequest): TE.TaskEither<DomainError, void> => {
  const tenant = { orgId: r.orgId, mode: r.mode };
  return pipe(
    tx.jobs.cancelWaiting(tenant, { key: expireJobKey(r.id) }),
    TE.chainW(() => tx.jobs.cancelWaiting(tenant, { prefix: autoRemindJobPrefix(r.id) })),
  );
};

/**
 * Applies one state-machine command and stores the result. A command the state machine accepts without a
 * change (Notify, Open or View of a recipient already further along) keeps the version and writes nothing:
 * the store would refuse an unchanged version as a concurrent modification. A command that ends a sent
 * request also cancels its scheduled jobs (a draft has none).
 */
export const applyCommand = (
  tx: Stores,
  r: SignatureRequest,
  cmd: RequestCommand,
  now: Date,
): TE.TaskEither<DomainError, SignatureRequest> =>
  pipe(
    TE.fromEither(E.mapLeft(fromTransitionError)(transition(r, cmd, now))),
    TE.chainFirstW((next) => (next.version === r.version ? TE.right(undefined) : tx.signatureRequests.update(next))),
    TE.chainFirstW((next) => (r.sentAt !== null && !isTerminal(r.status) && isTerminal(next.status) ? cancelSchedule(tx, next) : TE.right(undefined))),
  );
