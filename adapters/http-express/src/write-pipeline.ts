import * as E from 'fp-ts/lib/Either.js';
import type { Request, Response } from 'express';
import type { DomainError, IdempotencyContext, StoredResponse, Tenant, ValidationFailed } from '@esig/core';
import { answeredAlready, canonicalJson, execute, executeIdempotently, fingerprintSource, isValidIdempotencyKey, validationFailed } from '@esig/core';
import type { EsigHttpDeps } from './deps.js';
import { isStorable, statusOf, toProblem } from './problem.js';
import type { WriteOp } from './route.js';
import { sendProblem } from './send.js';

/** The call's `Idempotency-Key`: undefined when none was sent; a validation failure when it is ill-formed. */
export const idempotencyKeyOf = (req: Request): E.Either<ValidationFailed, string | undefined> => {
  const key = req.header('Idempotency-Key');
  return key !== undefined && !isValidIdempotencyKey(key)
    ? E.left(validationFailed([{ path: 'Idempotency-Key', message: 'must be 1 to 255 printable ASCII characters' }]))
    : E.right(key);
};

/** Who makes a write, as its Idempotency-Key's record knows them: the record's tenant and the credential it is replayed to. */
export interface WriteCaller {
  readonly tenant: Tenant;
  /** `credentialId` of an API key or a token, or the signing link's (`signingLinkCredential`). */
  readonly credential: string;
  readonly requestId: string;
  /**
   * Where the caller's keys live within the tenant's: prepended to the client's key to name its record. A signing
   * link's keys are its own (`link:<token hash>:`), so that no one holding a link can take, or learn of, a key the
   * organization's API clients use, nor they one of the link's. API clients have none: their keys are the tenant's.
   */
  readonly keySpace?: string;
}

/**
 * Runs a write's command and sends its answer: in a transaction of its own without a key, or under the key
 * (`executeIdempotently`), its answer stored with its writes and replayed to a repeat of the same call by the same
 * credential. Outcomes are stored (a committed refusal, `WriteOp.refused`, included); rejections before the command
 * and server faults are not.
 */
export const runWrite = async (
  deps: EsigHttpDeps,
  req: Request,
  res: Response,
  o: { readonly key: string | undefined; readonly caller: WriteCaller; readonly sealResponse: boolean },
  w: WriteOp<unknown>,
): Promise<void> => {
  const problem = (e: DomainError): StoredResponse => ({
    status: statusOf(e),
    body: JSON.stringify(toProblem(e, o.caller.requestId)),
    headers: { 'content-type': 'application/problem+json' },
  });
  const render = (r: E.Either<DomainError, unknown>): StoredResponse | null => {
    if (E.isLeft(r)) return isStorable(r.left) ? problem(r.left) : null;
    // A refusal the command committed (a wrong identification code, counted) is its outcome, stored as such.
    const refusal = w.refused?.(r.right) ?? null;
    return refusal !== null
      ? problem(refusal)
      : { status: w.status, body: JSON.stringify(w.present(r.right)), headers: { 'content-type': 'application/json; charset=utf-8' } };
  };

  // Whether this run's command committed: then what the handler set aside is the command's, and there is
  // nothing to release. Anything else (a failure, a refusal, a replay, a throw) releases it.
  let committed = false;
  try {
    if (o.key === undefined) {
      const r = await execute(deps)(w.command)();
      committed = E.isRight(r) && (w.refused?.(r.right) ?? null) === null;
      const stored = render(r);
      return stored ? sendStored(res, stored, false) : sendProblem(res, E.isLeft(r) ? r.left : { _tag: 'Internal' });
    }
    const r = await executeIdempotently(deps)(idempotencyContext(deps, req, o.caller, o.key, o.sealResponse), w.command, render)();
    committed = E.isRight(r) && !r.right.replayed && r.right.response.status < 400;
    if (E.isLeft(r)) sendProblem(res, r.left);
    else sendStored(res, r.right.response, r.right.replayed);
  } finally {
    if (!committed && w.release !== undefined) void w.release().catch(() => undefined);
  }
};

/** A write's answer as stored under its key, sent as it was, or replayed. */
const sendStored = (res: Response, s: StoredResponse, replayed: boolean) => {
  if (replayed) res.setHeader('Idempotency-Replayed', 'true');
  res.statusCode = s.status;
  for (const [h, v] of Object.entries(s.headers)) res.setHeader(h, v);
  // The body is a finished JSON string: written as it is, without Express's send (ETag, freshness and
  // content-type checks this answer has no use for: writes are never cached).
  res.setHeader('Content-Length', Buffer.byteLength(s.body));
  res.end(s.body);
};

/** The key's record as a write names it: the caller's tenant, the key in the caller's key space, and the call's fingerprint. */
const idempotencyContext = (deps: EsigHttpDeps, req: Request, caller: WriteCaller, key: string, sealResponse: boolean): IdempotencyContext => ({
  tenant: caller.tenant,
  key: recordKey(caller, key),
  fingerprint: deps.crypto.sha256Hex(fingerprintSource({ credential: caller.credential, method: req.method, path: req.path, bodyDigest: bodyDigest(req, deps.crypto.sha256Hex) })),
  sealResponse,
});

/**
 * The name of a key's record: the caller's key space, then the key. An API client has no key space, and its keys are
 * the tenant's as sent, but for those that begin as a key space does (`link:`, a signing link's) or as the escape
 * itself (`api:`): they are named `api:<key>`. So no client's key names a record of a signing link's (whose token's
 * hash the organization can compute from an embedded signing URL), and the mapping stays one to one.
 */
const recordKey = (caller: WriteCaller, key: string): string =>
  caller.keySpace !== undefined ? `${caller.keySpace}${key}` : /^(?:link|api):/.test(key) ? `api:${key}` : key;

/**
 * For a route that looks its key up first (`WriteRoute.lookUpKeyFirst`): answers the call from the key's record when
 * the record decides it already (a replay, a key reused, a call in flight), before the route's costly work; `false`
 * when the call goes on. What goes on is decided again, with the command.
 */
export const answeredFromKey = async (deps: EsigHttpDeps, req: Request, res: Response, o: { readonly key: string; readonly caller: WriteCaller; readonly sealResponse: boolean }): Promise<boolean> => {
  const r = await answeredAlready(deps)(idempotencyContext(deps, req, o.caller, o.key, o.sealResponse))();
  if (E.isLeft(r)) return (sendProblem(res, r.left), true);
  if (r.right === null) return false;
  sendStored(res, r.right, true);
  return true;
};

/**
 * What the idempotency fingerprint covers besides method and path: the query and the body, by meaning. Taken once a
 * call: a route that looks its key up first (`answeredFromKey`) names the record again with its command, and an
 * upload's digest is a hash of the whole file on the event loop.
 */
const digests = new WeakMap<Request, string>();
const bodyDigest = (req: Request, sha256Hex: (d: Uint8Array | string) => string): string => {
  const known = digests.get(req);
  if (known !== undefined) return known;
  const digest = takeBodyDigest(req, sha256Hex);
  digests.set(req, digest);
  return digest;
};
const takeBodyDigest = (req: Request, sha256Hex: (d: Uint8Array | string) => string): string => {
  const query = canonicalJson({ ...req.query });
  const file = (req as Request & { file?: { buffer: Buffer } }).file;
  if (file) return sha256Hex(`${query}|multipart|${canonicalJson(req.body ?? {})}|${sha256Hex(file.buffer)}`);
  if (Buffer.isBuffer(req.body)) return sha256Hex(`${query}|raw|${sha256Hex(req.body)}`);
  return sha256Hex(`${query}|json|${canonicalJson(req.body ?? {})}`);
};
