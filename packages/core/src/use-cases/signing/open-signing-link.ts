import { pipe } from 'fp-ts/function';
import * as TE from 'fp-ts/TaskEither';
import type { DomainError } from '../../errors';
import type { ClientInfo } from '../../model/evidence';
import { applyCommand } from '../policy';
import { appendEvent, appendEvidence } from './records';
import type { SignerDeps } from './signer-step';
import { signerStep } from './signer-step';
import type { SignerView } from './signing-session';

/**
 * A recipient resolved their link: the first time, while the request is open, this records `OPENED`
 * (event `signer.opened`, evidence with address and client). Later visits only read.
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
