import { pipe } from 'fp-ts/function';
import * as TE from 'fp-ts/TaskEither';
import type { DomainError } from '../../errors';
import { invalidState } from '../../errors';
import type { ClientInfo } from '../../model/evidence';
import { applyCommand } from '../policy';
import { appendEvent, appendEvidence } from './records';
import type { SignerDeps } from './signer-step';
import { signerStep } from './signer-step';
import { isIdentified } from './signing-session';
import type { SignerView } from './signing-session';

/** The agreement itself was displayed (not just the link resolved): `VIEWED`, event `request.viewed`, once. */
export const viewAgreement =
  (deps: SignerDeps) =>
  (token: string, client: ClientInfo): TE.TaskEither<DomainError, SignerView> =>
    signerStep(deps)(token, (tx, { request, recipient }, now) => {
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
