import type { ApiScope } from './model/scopes.js';

/** One problem with an input, addressed by a dotted path (`fields.0.page`). */
export interface FieldProblem {
  readonly path: string;
  readonly message: string;
}

export interface ValidationFailed {
  readonly _tag: 'ValidationFailed';
  readonly detail: string;
  readonly errors: readonly FieldProblem[];
}
export interface Unauthenticated {
  readonly _tag: 'Unauthenticated';
  readonly detail: string;
}
export interface InsufficientScope {
  readonly _tag: 'InsufficientScope';
  readonly scope: ApiScope | string;
}
export interface NotFound {
  readonly _tag: 'NotFound';
  readonly resource: string;
  readonly id: string;
}
export interface InvalidState {
  readonly _tag: 'InvalidState';
  readonly detail: string;
}
export interface IdempotencyInProgress {
  readonly _tag: 'IdempotencyInProgress';
}
export interface IdempotencyKeyReused {
  readonly _tag: 'IdempotencyKeyReused';
}
export interface InvalidDocument {
  readonly _tag: 'InvalidDocument';
  readonly detail: string;
}
export interface RateLimited {
  readonly _tag: 'RateLimited';
  readonly retryAfterS: number;
}
/**
 * Mail could not be handed to a mail server right now (the caller may retry). `cause` is what the mail
 * transport said (the server's reply, or the connection's error, naming its host): logged, never shown.
 */
export interface MailUnavailable {
  readonly _tag: 'MailUnavailable';
  readonly detail: string;
  readonly cause: string;
}
/**
 * The server cannot take this call now because it has more of this kind of work than it can hold (uploads waiting to
 * be read, say). Nothing was done; the caller may send the same call again after `retryAfterS` seconds.
 */
export interface ServerBusy {
  readonly _tag: 'ServerBusy';
  readonly detail: string;
  readonly retryAfterS: number;
}
/** An adapter failed (driver error, unreadable row). Maps to 500; the cause is logged, never shown. */
export interface StoreFailure {
  readonly _tag: 'StoreFailure';
  readonly cause: unknown;
}
/** A concurrent writer changed the aggregate first; the caller may retry the whole command. */
export interface ConcurrentModification {
  readonly _tag: 'ConcurrentModification';
  readonly resource: string;
  readonly id: string;
}

/**
 * What a client reads first when no detail is given: the first problem, worded as the HTTP adapter's decoder words
 * its own (`origin must be an https origin.`), so that `detail` names what to fix on every route, not only on those
 * whose body a codec refused.
 */
const firstProblem = (errors: readonly FieldProblem[]): string => {
  const first = errors[0];
  return first === undefined ? 'The request is not valid.' : `${first.path === '(body)' ? 'The body' : first.path} ${first.message}.`;
};
export const validationFailed = (errors: readonly FieldProblem[], detail: string = firstProblem(errors)): ValidationFailed => ({ _tag: 'ValidationFailed', detail, errors });
export const unauthenticated = (detail = 'A valid API key is required.'): Unauthenticated => ({ _tag: 'Unauthenticated', detail });
export const insufficientScope = (scope: string): InsufficientScope => ({ _tag: 'InsufficientScope', scope });
export const notFound = (resource: string, id: string): NotFound => ({ _tag: 'NotFound', resource, id });
export const invalidState = (detail: string): InvalidState => ({ _tag: 'InvalidState', detail });
export const idempotencyInProgress = (): IdempotencyInProgress => ({ _tag: 'IdempotencyInProgress' });
export const idempotencyKeyReused = (): IdempotencyKeyReused => ({ _tag: 'IdempotencyKeyReused' });
export const invalidDocument = (detail: string): InvalidDocument => ({ _tag: 'InvalidDocument', detail });
export const rateLimited = (retryAfterS: number): RateLimited => ({ _tag: 'RateLimited', retryAfterS });
export const mailUnavailable = (detail: string, cause: string): MailUnavailable => ({ _tag: 'MailUnavailable', detail, cause });
export const serverBusy = (detail: string, retryAfterS: number): ServerBusy => ({ _tag: 'ServerBusy', detail, retryAfterS });
export const storeFailure = (cause: unknown): StoreFailure => ({ _tag: 'StoreFailure', cause });
export const concurrentModification = (resource: string, id: string): ConcurrentModification => ({ _tag: 'ConcurrentModification', resource, id });

/** What a store port can fail with. */
export type StoreError = StoreFailure | ConcurrentModification;

/** Every error a use case can return. The HTTP adapter maps each tag exhaustively to a status and code. */
export type DomainError =
  | ValidationFailed
  | Unauthenticated
  | InsufficientScope
  | NotFound
  | InvalidState
  | IdempotencyInProgress
  | IdempotencyKeyReused
  | InvalidDocument
  | RateLimited
  | MailUnavailable
  | ServerBusy
  | StoreError;
