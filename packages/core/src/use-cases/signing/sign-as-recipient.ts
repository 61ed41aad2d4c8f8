import { pipe } from 'fp-ts/function';
import * as TE from 'fp-ts/TaskEither';
import type { DomainError } from '../../errors';
import { validationFailed } from '../../errors';
import { checkAdoptedSignature } from './adopted-signature';
import type { ClientInfo } from '../../model/evidence';
import type { AdoptedSignature, FieldValue } from '../../model/signature-request';
import { signersDue } from '../../state-machine';
import { applyCommand } from '../policy';
import { appendEvent, appendEvidence, enqueueJob, inviteDueSigners } from './records';
import type { SignerDeps } from './signer-step';
import { signerStep } from './signer-step';
import type { SignerView } from './signing-session';

export interface SignInput {
  readonly values: Readonly<Record<string, FieldValue>>;
  readonly signature: AdoptedSignature;
}

/**
 * A signer signs. In one transaction: the values and the signature, `SIGNED`, event `signer.signed`,
 * evidence; then either the next signers' invitations (sequential order) or — when this was the last
 * signature — `COMPLETED` with its certificate id and the sealing job that produces the finished PDF and
 * the certificate and then releases `request.completed`.
 */
export const signAsRecipient =
  (deps: SignerDeps) =>
  (token: string, input: SignInput, client: ClientInfo): TE.TaskEither<DomainError, SignerView> =>
    signerStep(deps)(token, (tx, { request, recipient }, now) => {
      const at = now.toISOString();
      const bad = checkAdoptedSignature(input.signature);
      if (bad !== null) return TE.left(validationFailed([bad], `${bad.path}: ${bad.message}.`));
      return pipe(
        applyCommand(tx, request, { type: 'Sign', recipientId: recipient.id, values: input.values, signature: input.signature, certificateId: deps.ids.next('coc') }, now),
        TE.chainFirstW((r) => appendEvent(tx, deps.ids, r, 'signer.signed', at, { recipient_id: recipient.id, signed_at: at })),
        TE.chainFirstW((r) => appendEvidence(tx, deps.ids, r, 'signed', at, recipient.id, client, { signature: input.signature.kind })),
        TE.chainW((r) =>
          r.status === 'COMPLETED'
            ? pipe(
                appendEvidence(tx, deps.ids, r, 'completed', at, null, null),
                TE.chainW(() => enqueueJob(tx, deps.ids, r, 'seal', { requestId: r.id }, at, at, `seal:${r.id}`)),
              )
            : inviteDueSigners(tx, deps.ids, r, signersDue(r), at),
        ),
      );
    });
