import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '../../task-either.js';
import type { DomainError } from '../../errors.js';
import type { ClientInfo } from '../../model/evidence.js';
import { applyCommand, check } from '../policy.js';
import { unstorableText } from '../../storable-text.js';
import { appendEvent, appendEvidence } from './records.js';
import type { SignerDeps } from './signer-step.js';
import { signerCommand } from './signer-step.js';
import type { Command } from '../command.js';
import type { SignerView } from './signing-session.js';

/**
 * A signer declines: the request ends as DECLINED, its documents too. The reason goes to the evidence
 * trail only; events carry no free text.
 */
export const declineAsRecipient =
  (deps: SignerDeps) =>
  (token: string, reason: string, client: ClientInfo): TE.TaskEither<DomainError, SignerView> =>
    deps.uow.transaction(declineAsRecipientCommand(deps)(token, reason, client));

/** `declineAsRecipient` as a command, for a transaction of the caller's (an Idempotency-Key's record beside it). */
export const declineAsRecipientCommand =
  (deps: Pick<SignerDeps, 'clock' | 'crypto' | 'ids'>) =>
  (token: string, reason: string, client: ClientInfo): Command<SignerView> =>
    signerCommand(deps)(token, (tx, { request, recipient, tenant }, now) => {
      const at = now.toISOString();
      return pipe(
        // Checked once the link is known, as every signer step checks its input: an unknown link is NotFound whatever the reason.
        check([unstorableText(reason, 'reason')]),
        TE.chainW(() => applyCommand(tx, request, { type: 'Decline', recipientId: recipient.id, reason }, now)),
        TE.chainFirstW((r) => tx.documents.setStatusForRequest(tenant, r, 'DECLINED')),
        TE.chainFirstW((r) => appendEvent(tx, deps.ids, r, 'request.declined', at, { recipient_id: recipient.id, status: r.status, declined_at: at })),
        TE.chainFirstW((r) => appendEvidence(tx, deps.ids, r, 'declined', at, recipient.id, client, { reason })),
      );
    });
