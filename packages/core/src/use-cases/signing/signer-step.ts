import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '../../task-either.js';
import type { DomainError } from '../../errors.js';
import type { ClientInfo } from '../../model/evidence.js';
import type { Clock } from '../../ports/clock.js';
import type { Crypto } from '../../ports/crypto.js';
import type { IdGenerator } from '../../ports/id-generator.js';
import type { Stores } from '../../ports/stores.js';
import type { UnitOfWork } from '../../ports/unit-of-work.js';
import type { SignerView, SigningContext } from './signing-session.js';
import { buildSignerView, loadSigningContext } from './signing-session.js';

export interface SignerDeps {
  readonly stores: Stores;
  readonly uow: UnitOfWork;
  readonly clock: Clock;
  readonly ids: IdGenerator;
  readonly crypto: Crypto;
}

/**
 * Runs one signer action in a transaction: resolve the link inside it (so the state is current), apply
 * `step`, then answer with the signer's view of the result.
 */
export const signerStep =
  (deps: SignerDeps) =>
  (
    token: string,
    step: (tx: Stores, ctx: SigningContext, now: Date) => TE.TaskEither<DomainError, unknown>,
  ): TE.TaskEither<DomainError, SignerView> =>
    deps.uow.transaction((tx) =>
      pipe(
        loadSigningContext(tx, deps, token, true),
        TE.chainFirstW((ctx) => step(tx, ctx, deps.clock.now())),
        TE.chainW(() => loadSigningContext(tx, deps, token)),
        TE.chainW((ctx) => buildSignerView(tx, ctx)),
      ),
    );

export type { ClientInfo };
