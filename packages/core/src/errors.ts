import type { ApiScope } from './model/scopes.js';

/** One problem with an input, addressed by a dotted path (`fields.0.page`). */
export interface FieldProblem {
  readonly path: string;
  readonly message: string;
}

export const validationFailed = (errors: readonly FieldProblem[], detail = 'The request is not valid.') =>
  ({ _tag: 'ValidationFailed', detail, errors }) as const;
export const unauthenticated = (detail = 'A valid API key is required.') => ({ _tag: 'Unauthenticated', detail }) as const;
export const insufficientScope = (scope: string) => ({ _tag: 'InsufficientScope', scope }) as const;
export const notFound = (resource: string, id: string) => ({ _tag: 'NotFound', resource, id }) as const;
export const invalidState = (detail: string) => ({ _tag: 'InvalidState', detail }) as const;
export const idempotencyInProgress = () => ({ _tag: 'IdempotencyInProgress' }) as const;
export const idempotencyKeyReused = () => ({ _tag: 'IdempotencyKeyReused' }) as const;
export const invalidDocument = (detail: string) => ({ _tag: 'InvalidDocument', detail }) as const;
export const rateLimited = (retryAfterS: number) => ({ _tag: 'RateLimited', retryAfterS }) as const;
/** Mail could not be handed to a mail server right now (the caller may retry). */
export const mailUnavailable = (detail: string) => ({ _tag: 'MailUnavailable', detail }) as const;
/** An adapter failed (driver error, unreadable row). Maps to 500; the cause is logged, never shown. */
export const storeFailure = (cause: unknown) => ({ _tag: 'StoreFailure', cause }) as const;
/** A concurrent writer changed the aggregate first; the caller may retry the whole command. */
export const concurrentModification = (resource: string, id: string) =>
  ({ _tag: 'ConcurrentModification', resource, id }) as const;

export type ValidationFailed = ReturnType<typeof validationFailed>;
export type Unauthenticated = ReturnType<typeof unauthenticated>;
export type InsufficientScope = ReturnType<typeof insufficientScope> & { readonly scope: ApiScope | string };
export type NotFound = ReturnType<typeof notFound>;
export type InvalidState = ReturnType<typeof invalidState>;
export type IdempotencyInProgress = ReturnType<typeof idempotencyInProgress>;
export type IdempotencyKeyReused = ReturnType<typeof idempotencyKeyReused>;
export type InvalidDocument = ReturnType<typeof invalidDocument>;
export type RateLimited = ReturnType<typeof rateLimited>;
export type StoreFailure = ReturnType<typeof storeFailure>;
export type MailUnavailable = ReturnType<typeof mailUnavailable>;
export type ConcurrentModification = ReturnType<typeof concurrentModification>;

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
  | StoreError;
