import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '../../task-either.js';
import type { DomainError } from '../../errors.js';
import type { ClientInfo } from '../../model/evidence.js';
import type { Clock } from '../../ports/clock.js';
import type { Crypto } from '../../ports/crypto.js';
import type { IdGenerator } from '../../ports/id-generator.js';
import type { Stores } from '../../ports/stores.js';
import type { UnitOfWork } from '../../ports/unit-of-work.js';
import type { Tenant } from '../../model/tenant.js';
import type { Command } from '../command.js';
import type { SignerView, SigningContext } from './signing-session.js';
import { buildSignerView, findLiveLink, loadSigningContext } from './signing-session.js';

export interface SignerDeps {
  readonly stores: Stores;
  readonly uow: UnitOfWork;
  readonly clock: Clock;
  readonly ids: IdGenerator;
  readonly crypto: Crypto;
}

type Step = (tx: Stores, ctx: SigningContext, now: Date) => TE.TaskEither<DomainError, unknown>;

/**
 * One signer action as a command: resolve the link inside its transaction (so the state is current), apply
 * `step`, then answer with the signer's view of the result. The HTTP adapter runs it under an
 * Idempotency-Key (`executeIdempotently`), so that its answer is stored with its writes.
 */
export const signerCommand =
  (deps: Pick<SignerDeps, 'clock' | 'crypto'>) =>
  (token: string, step: Step): Command<SignerView> =>
  (tx) =>
    pipe(
      loadSigningContext(tx, deps, token, true),
      TE.chainFirstW((ctx) => step(tx, ctx, deps.clock.now())),
      TE.chainW(() => loadSigningContext(tx, deps, token)),
      TE.chainW((ctx) => buildSignerView(tx, ctx)),
    );

/** Runs one signer action (`signerCommand`) in a transaction of its own. */
export const signerStep =
  (deps: SignerDeps) =>
  (token: string, step: Step): TE.TaskEither<DomainError, SignerView> =>
    deps.uow.transaction(signerCommand(deps)(token, step));

/**
 * Who calls with a signing link, for an Idempotency-Key's record: the link's tenant, and the link itself as the
 * credential (`link:` and its token's hash), so that a stored answer is replayed only to a call with the same
 * link. An unknown or expired link is `NotFound`, as for every signer call: no record is looked up for it.
 */
export const signingLinkCredential =
  (deps: Pick<SignerDeps, 'stores' | 'clock' | 'crypto'>) =>
  (token: string): TE.TaskEither<DomainError, { readonly tenant: Tenant; readonly credential: string }> =>
    pipe(
      // The link alone (one lookup by its hash): the command reads the request itself, under its lock.
      findLiveLink(deps.stores, deps, token),
      TE.map((link) => ({ tenant: { orgId: link.orgId, mode: link.mode }, credential: `link:${link.tokenHash}` })),
    );

export type { ClientInfo };
