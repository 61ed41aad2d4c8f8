import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '../../task-either.js';
import type { DomainError, FieldProblem } from '../../errors.js';
import { storeFailure, validationFailed } from '../../errors.js';
import { checkAdoptedSignature, checkFieldValues } from './adopted-signature.js';
import type { ClientInfo } from '../../model/evidence.js';
import type { AdoptedSignature, FieldValue } from '../../model/signature-request.js';
import type { StampPreflight } from '../../ports/stamp-preflight.js';
import type { RequestCommand } from '../../state-machine.js';
import { awaitingSeal, signersDue, transition } from '../../state-machine.js';
import { applyCommand } from '../policy.js';
import { unstorableText } from '../../storable-text.js';
import { appendEvent, appendEvidence, enqueueJob, inviteDueSigners } from './records.js';
import type { SignerDeps } from './signer-step.js';
import { signerCommand } from './signer-step.js';
import type { Command } from '../command.js';
import type { SignerView } from './signing-session.js';
import { loadSigningContext } from './signing-session.js';

export interface SignInput {
  readonly values: Readonly<Record<string, FieldValue>>;
  readonly signature: AdoptedSignature;
}

export interface SignDeps extends SignerDeps {
  /** Proves, before anything is recorded, that the seal will be able to stamp what this signer gives. */
  readonly stamps: StampPreflight;
}

const refuse = (problems: readonly FieldProblem[]): DomainError =>
  validationFailed(problems, problems.map((p) => `${p.path}: ${p.message}.`).join(' '));

/**
 * Refuses what the seal could not stamp, before the transaction: once the link is resolved (an unknown
 * one is `NotFound` whatever the body), the cheap checks, then the renderer's own preflight over exactly
 * the fields this signature will fill (the transition is run on the current state to find them).
 * Rendering must not hold the write transaction, and a value that cannot be drawn must never reach a
 * request whose signers have all signed, which no one could then seal.
 */
const preflight = (deps: SignDeps, token: string, input: SignInput, cmd: (recipientId: string) => RequestCommand): TE.TaskEither<DomainError, void> =>
  pipe(
    loadSigningContext(deps.stores, deps, token),
    TE.chainW(({ request, recipient }) => {
      const cheap = [unstorableText(input.values, 'values'), checkAdoptedSignature(input.signature), ...checkFieldValues(input.values)].filter((p): p is FieldProblem => p !== null);
      if (cheap.length > 0) return TE.right(cheap);
      // Only the fields of the would-be state are read.
      const next = transition(request, cmd(recipient.id), deps.clock.now());
      // A refused transition is reported by the transaction, against the state current there.
      if (E.isLeft(next)) return TE.right([]);
      const fields = next.right.fields.filter((f) => f.recipientId === recipient.id);
      return pipe(deps.stamps.check({ signature: input.signature, fields }), TE.mapLeft(storeFailure));
    }),
    TE.chainW((problems) => (problems.length > 0 ? TE.left(refuse(problems)) : TE.right(undefined))),
  );

/**
 * A signer signs. First the values and the signature are proven stampable (see `preflight`; a refusal is
 * `ValidationFailed` naming `signature.value` or `values.<fieldId>`). Then in one transaction: the values
 * and the signature, `SIGNED`, event `signer.signed`, evidence; then either the next signers' invitations
 * (sequential order) or — when this was the last signature — the sealing job, which produces the finished
 * PDF and the certificate and only then makes the request `COMPLETED` and releases `request.completed`.
 *
 * @example
 * const view = await signAsRecipient(deps)(token, { values: {}, signature: { kind: 'typed', value: 'Ada Lovelace' } }, client)();
 */
export const signAsRecipient =
  (deps: SignDeps) =>
  (token: string, input: SignInput, client: ClientInfo): TE.TaskEither<DomainError, SignerView> =>
    pipe(
      signAsRecipientCommand(deps)(token, input, client),
      TE.chainW((command) => deps.uow.transaction(command)),
    );

/**
 * `signAsRecipient` as a command, for a transaction of the caller's (an Idempotency-Key's record beside it): the
 * preflight runs first, outside any transaction, and a refusal there is the Left; the Right is the command.
 */
export const signAsRecipientCommand =
  (deps: SignDeps) =>
  (token: string, input: SignInput, client: ClientInfo): TE.TaskEither<DomainError, Command<SignerView>> => {
    const cmd = (recipientId: string): RequestCommand => ({
      type: 'Sign',
      recipientId,
      values: input.values,
      signature: input.signature,
    });
    return pipe(
      preflight(deps, token, input, cmd),
      TE.map(
        (): Command<SignerView> =>
          signerCommand(deps)(token, (tx, { request, recipient }, now) => {
            const at = now.toISOString();
            return pipe(
              applyCommand(tx, request, cmd(recipient.id), now),
              TE.chainFirstW((r) => appendEvent(tx, deps.ids, r, 'signer.signed', at, { recipient_id: recipient.id, signed_at: at })),
              TE.chainFirstW((r) => appendEvidence(tx, deps.ids, r, 'signed', at, recipient.id, client, { signature: input.signature.kind })),
              TE.chainW((r) =>
                awaitingSeal(r)
                  ? pipe(
                      appendEvidence(tx, deps.ids, r, 'completed', at, null, null),
                      TE.chainW(() => enqueueJob(tx, deps.ids, r, { kind: 'seal.complete', payload: { requestId: r.id }, runAt: at, createdAt: at, dedupeKey: `seal:${r.id}` })),
                    )
                  : inviteDueSigners(tx, deps.ids, r, signersDue(r), at),
              ),
            );
          }),
      ),
    );
  };
