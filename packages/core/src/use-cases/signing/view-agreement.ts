import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '../../task-either.js';
import type { DomainError } from '../../errors.js';
import { invalidState } from '../../errors.js';
import type { ClientInfo } from '../../model/evidence.js';
import { applyCommand } from '../policy.js';
import { appendEvent, appendEvidence } from './records.js';
import type { SignerDeps } from './signer-step.js';
import { signerCommand } from './signer-step.js';
import type { Command } from '../command.js';
import { isIdentified } from './signing-session.js';
import type { SignerView } from './signing-session.js';

/** The agreement itself was displayed (not just the link resolved): `VIEWED`, event `request.viewed`, once. */
export const viewAgreement =
  (deps: SignerDeps) =>
  (token: string, client: ClientInfo): TE.TaskEither<DomainError, SignerView> =>
    deps.uow.transaction(viewAgreementCommand(deps)(token, client));

/** `viewAgreement` as a command, for a transaction of the caller's (an Idempotency-Key's record beside it). */
export const viewAgreementCommand =
  (deps: Pick<SignerDeps, 'clock' | 'crypto' | 'ids'>) =>
  (token: string, client: ClientInfo): Command<SignerView> =>
    signerCommand(deps)(token, (tx, { request, recipient }, now) => {
      if (!isIdentified(recipient)) return TE.left(invalidState('Identification is required first.'));
      if (request.status !== 'SENT' || recipient.status === 'VIEWED' || recipient.status === 'SIGNED' || recipient.status === 'DECLINED')
        return TE.right(undefined);
      const at = now.toISOString();
      return pipe(
        applyCommand(tx, request, { type: 'View', recipientId: recipient.id }, now),
        TE.chainW((r) => appendEvent(tx, deps.ids, r, 'request.viewed', at, { recipient_id: recipient.id, viewed_at: at })),
        TE.chainW(() => appendEvidence(tx, deps.ids, request, 'viewed', at, recipient.id, client)),
      );
    });
