import type * as TE from 'fp-ts/lib/TaskEither.js';
import type * as t from 'io-ts';
import type { ApiScope, ClientInfo, Command, DomainError, Principal } from '@esig/core';
import type { ProblemCode } from './problem.js';

/** What a read handler answers: JSON, or bytes (PDFs). */
export type Reply =
  | { readonly kind: 'json'; readonly status: number; readonly body: unknown }
  | { readonly kind: 'bytes'; readonly status: number; readonly contentType: string; readonly bytes: Uint8Array; readonly filename?: string };

/** What a write handler hands to the pipeline: a command to run (maybe idempotently) and how to show its result. */
export interface WriteOp<A> {
  readonly command: Command<A>;
  readonly status: number;
  readonly present: (a: A) => unknown;
  /** A refusal the command commits with (a wrong identification code, which counts): answered, and stored, as the problem. */
  readonly refused?: (a: A) => DomainError | null;
  /**
   * Runs once the write has ended, whatever its outcome (after the answer is sent, not awaited by it): frees
   * what the handler set aside outside the command (staged content), which a command that ran and committed
   * has made its own. Best effort: it must not fail.
   */
  readonly release?: () => Promise<unknown>;
}

export interface Upload {
  readonly bytes: Uint8Array;
  readonly name: string | undefined;
}

export interface RouteContext<P, Q, B> {
  readonly principal: Principal;
  readonly params: P;
  readonly query: Q;
  readonly body: B;
  readonly upload: Upload | null;
  /** The request's Accept header, for routes with more than one representation. */
  readonly accept: string | undefined;
}

/** The success answer of a route: JSON described by a codec, or bytes of a content type. */
export interface ResponseSpec {
  readonly status: number;
  readonly codec?: t.Mixed;
  readonly contentType?: string;
  /** For bytes: the JSON representation a client gets instead with `Accept: application/json`. */
  readonly json?: t.Mixed;
  readonly description: string;
}

/**
 * Rejections particular to one route, by problem code (`invalid_document`), saying when: the OpenAPI document
 * lists them besides those every route of its kind may answer.
 */
export type RouteErrors = Readonly<Partial<Record<ProblemCode, string>>>;

export const json = (status: number) => (body: unknown): Reply => ({ kind: 'json', status, body });
export const pdf = (bytes: Uint8Array, filename: string): Reply => ({ kind: 'bytes', status: 200, contentType: 'application/pdf', bytes, filename });

type Decoded<C> = C extends t.Mixed ? t.TypeOf<C> : undefined;
type ParamsOf<P> = { [K in keyof P]: Decoded<P[K]> };

interface RouteBase<P extends Record<string, t.Mixed>, Q extends t.Mixed | undefined, B extends t.Mixed | undefined> {
  readonly method: 'get' | 'post' | 'patch' | 'delete';
  /** OpenAPI-style path, e.g. `/api/v1/documents/{documentId}`. */
  readonly path: string;
  readonly operationId: string;
  readonly summary: string;
  readonly tag: string;
  readonly scope: ApiScope;
  readonly params?: P;
  readonly query?: Q;
  /** A JSON body codec, or `pdf` for the upload route (raw application/pdf or multipart/form-data). */
  readonly body?: B | 'pdf';
  /** Whether a missing body counts as `{}` (action routes like send and cancel). */
  readonly emptyBodyAllowed?: boolean;
  readonly response: ResponseSpec;
  readonly errors?: RouteErrors;
}

export interface ReadRoute<P extends Record<string, t.Mixed>, Q extends t.Mixed | undefined, B extends t.Mixed | undefined> extends RouteBase<P, Q, B> {
  readonly kind: 'read';
  readonly handle: (ctx: RouteContext<ParamsOf<P>, Decoded<Q>, Decoded<B>>) => TE.TaskEither<DomainError, Reply>;
}

export interface WriteRoute<P extends Record<string, t.Mixed>, Q extends t.Mixed | undefined, B extends t.Mixed | undefined> extends RouteBase<P, Q, B> {
  readonly kind: 'write';
  /**
   * Set on a route whose answers, success or problem, show nothing the store does not hold in clear already
   * (a resource's own representation): its idempotency records keep the response as sent. Every other
   * route's are sealed; leave it unset for anything that can show a secret (a key, a webhook secret, a URL
   * with a token).
   */
  readonly replayInClear?: true;
  /**
   * Set on a route whose `handle` does costly work before its command (an upload's inspection and staging): a call
   * with an Idempotency-Key first reads the key's record, and a replay, a key reused or a call still in flight is
   * answered without that work. Every other route decides on the key only with its command, which saves the read.
   */
  readonly lookUpKeyFirst?: true;
  /** May do checks outside any transaction (e.g. parse an upload) before producing the command. */
  readonly handle: (ctx: RouteContext<ParamsOf<P>, Decoded<Q>, Decoded<B>>) => TE.TaskEither<DomainError, WriteOp<any>>;
}

export type Route = ReadRoute<any, any, any> | WriteRoute<any, any, any>;

/** Helpers that keep each route's handler typed by its own codecs. */
export const read = <P extends Record<string, t.Mixed> = {}, Q extends t.Mixed | undefined = undefined, B extends t.Mixed | undefined = undefined>(
  r: Omit<ReadRoute<P, Q, B>, 'kind'>,
): Route => ({ ...r, kind: 'read' }) as Route;

export const write = <P extends Record<string, t.Mixed> = {}, Q extends t.Mixed | undefined = undefined, B extends t.Mixed | undefined = undefined>(
  r: Omit<WriteRoute<P, Q, B>, 'kind'>,
): Route => ({ ...r, kind: 'write' }) as Route;

/** `/a/{id}` → `/a/:id`. */
export const toExpressPath = (p: string) => p.replace(/\{(\w+)\}/g, ':$1');

export const op = <A>(command: Command<A>, status: number, present: (a: A) => unknown, release?: () => Promise<unknown>): WriteOp<A> =>
  release === undefined ? { command, status, present } : { command, status, present, release };

// ---- The signer API ----------------------------------------------------------------------------------

/** Where the signer API is mounted. */
export const SIGNING_BASE = '/api/v1/signing';
/** The path every signer route starts with; `{token}` is the signing link's token, the route's only credential. */
export const SIGNING_PATH = `${SIGNING_BASE}/{token}`;

export interface SignerContext<P, B> {
  /** The link's token, of the right shape (whether it names a link is the use case's to say). */
  readonly token: string;
  readonly params: P;
  readonly body: B;
  /** Time, address and user agent go into the request's evidence trail. */
  readonly client: ClientInfo;
}

/**
 * A route of the signer API: no API key; the use case runs as the recipient the token names. Its codecs validate
 * the input and describe it in the OpenAPI document, as for `Route`.
 */
export interface SignerRoute<P extends Record<string, t.Mixed>, B extends t.Mixed | undefined> {
  readonly method: 'get' | 'post';
  /** OpenAPI-style path under `SIGNING_PATH`, e.g. `/api/v1/signing/{token}/sign`. */
  readonly path: string;
  readonly operationId: string;
  readonly summary: string;
  /** Path parameters besides `{token}`. */
  readonly params?: P;
  /** A JSON body codec; a missing body counts as `{}`. */
  readonly body?: B;
  readonly response: ResponseSpec;
  /** Rejections particular to this route, beyond those every signer route may answer. */
  readonly errors?: RouteErrors;
  readonly handle: (ctx: SignerContext<ParamsOf<P>, Decoded<B>>) => TE.TaskEither<DomainError, Reply>;
  /**
   * The call as a command, for a write that takes an `Idempotency-Key`: with a key it runs under the key's record
   * (scoped to the link's tenant, replayed only to the same link) instead of through `handle`, and answers as
   * `handle` would. A write without it (mailing a code) takes no key.
   */
  readonly write?: (ctx: SignerContext<ParamsOf<P>, Decoded<B>>) => TE.TaskEither<DomainError, WriteOp<any>>;
}

export type AnySignerRoute = SignerRoute<any, any>;

export const signer = <P extends Record<string, t.Mixed> = {}, B extends t.Mixed | undefined = undefined>(r: SignerRoute<P, B>): AnySignerRoute =>
  r as AnySignerRoute;
