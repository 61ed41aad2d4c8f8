import type { DomainError } from './errors.js';

/**
 * One sentence for any domain error, fit to show a person (the HTTP adapter uses it as the problem's
 * `detail`). A store failure or a mail outage says nothing of its cause: log `cause` yourself, never show it.
 *
 * @example
 * const r = await execute(deps)(sendSignatureRequest(deps)(me, requestId))();
 * if (E.isLeft(r)) console.error(`${r.left._tag}: ${describeError(r.left)}`);
 */
export const describeError = (e: DomainError): string => {
  switch (e._tag) {
    case 'ValidationFailed':
    case 'Unauthenticated':
    case 'InvalidState':
    case 'InvalidDocument':
    case 'MailUnavailable':
    case 'ServerBusy':
      return e.detail;
    case 'InsufficientScope':
      return `This call needs the scope ${e.scope}.`;
    case 'NotFound':
      return `No ${e.resource.replace(/_/g, ' ')} ${e.id}.`;
    case 'ConcurrentModification':
      return `The ${e.resource.replace(/_/g, ' ')} was changed by a concurrent call; retry.`;
    case 'IdempotencyInProgress':
      return 'A request with this Idempotency-Key is still being processed; retry shortly.';
    case 'IdempotencyKeyReused':
      return 'This Idempotency-Key was used with a different request.';
    case 'RateLimited':
      return `Rate limit exceeded; retry after ${e.retryAfterS} s.`;
    case 'StoreFailure':
      return 'An unexpected error occurred.';
  }
};
