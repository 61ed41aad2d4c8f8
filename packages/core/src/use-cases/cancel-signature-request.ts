import { pipe } from 'fp-ts/function';
import * as TE from 'fp-ts/TaskEither';
import type { Principal } from '../model/principal';
import type { SignatureRequest } from '../model/signature-request';
import type { Clock } from '../ports/clock';
import type { Command } from './command';
import { applyCommand, loadRequest, requireScope } from './policy';

/** DRAFT or SENT → CANCELLED; its documents become CANCELLED. Finished requests cannot be cancelled. */
export const cancelSignatureRequest =
  (deps: { readonly clock: Clock }) =>
  (p: Principal, requestId: string): Command<SignatureRequest> =>
  (tx) =>
    pipe(
      requireScope(p, 'signature_requests:write'),
      TE.chainW(() => loadRequest(tx, p, requestId)),
      TE.chainW((req) => applyCommand(tx, req, { type: 'Cancel' }, deps.clock.now())),
      TE.chainFirstW((req) => tx.documents.setStatusForRequest(p.tenant, req.id, 'CANCELLED')),
    );
