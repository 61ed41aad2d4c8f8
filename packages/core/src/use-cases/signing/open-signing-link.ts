import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '../../task-either.js';
import type { DomainError } from '../../errors.js';
import type { ClientInfo } from '../../model/evidence.js';
import { applyCommand } from '../policy.js';
import { appendEvent, appendEvidence } from './records.js';
import type { SignerDeps } from './signer-step.js';
import { signerStep } from './signer-step.js';
import type { SignerView } from './signing-session.js';

/**
 * A recipient resolved their link: the first time, while the request is open, this records `OPENED`
 * (event `signer.opened`, evidence with address and client). Later visits only read.
 *
 * @example
 * const view = await openSigningLink(deps)(token, client)();
 * if (E.isRight(view)) console.log(view.right.fields.length, view.right.yourTurn);
 */
export const openSigningLink =
  (deps: SignerDeps) =>
  (token: string, client: ClientInfo): TE.TaskEither<DomainError, SignerView> =>
    signerStep(deps)(token, (tx, { request, recipient }, now) => {
      const first = request.status === 'SENT' && (recipient.status === 'PENDING' || recipient.status === 'NOTIFIED');
      if (!first) return TE.right(undefined);
      const at = now.toISOString();
      return pipe(
        applyCommand(tx, request, { type: 'Open', recipientId: recipient.id }, now),
        TE.chainW((r) => appendEvent(tx, deps.ids, r, 'signer.opened', at, { recipient_id: recipient.id, opened_at: at })),
        TE.chainW(() => appendEvidence(tx, deps.ids, request, 'opened', at, recipient.id, client)),
      );
    });
