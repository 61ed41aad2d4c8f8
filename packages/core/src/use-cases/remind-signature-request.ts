import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '../task-either.js';
import { invalidState } from '../errors.js';
import type { Principal } from '../model/principal.js';
import type { SignatureRequest } from '../model/signature-request.js';
import type { Clock } from '../ports/clock.js';
import type { IdGenerator } from '../ports/id-generator.js';
import { AWAITING_SEAL_DETAIL, awaitingSeal, signersDue } from '../state-machine.js';
import type { Command } from './command.js';
import { loadRequest, requireScope } from './policy.js';
import { enqueueJob } from './signing/records.js';

/**
 * Re-notifies the signers whose turn it is and who have not signed. At most one manual reminder per signer
 * per minute is queued, so a double click does not mail twice.
 */
export const remindSignatureRequest =
  (deps: { readonly clock: Clock; readonly ids: IdGenerator }) =>
  (p: Principal, requestId: string): Command<SignatureRequest> =>
  (tx) => {
    const at = deps.clock.now().toISOString();
    return pipe(
      requireScope(p, 'signature_requests:write'),
      TE.chainW(() => loadRequest(tx, p, requestId)),
      TE.chainFirstW((r) =>
        r.status !== 'SENT'
          ? TE.left(invalidState(`A ${r.status} signature request cannot be reminded.`))
          : awaitingSeal(r)
            ? TE.left(invalidState(AWAITING_SEAL_DETAIL))
            : TE.right(r),
      ),
      TE.chainFirstW((r) =>
        pipe(
          signersDue(r),
          TE.traverseSeqArray((s) => enqueueJob(tx, deps.ids, r, { kind: 'mail.remind', payload: { requestId: r.id, recipientId: s.id }, runAt: at, createdAt: at, dedupeKey: `remind:${s.id}:manual:${at.slice(0, 16)}` })),
        ),
      ),
    );
  };
