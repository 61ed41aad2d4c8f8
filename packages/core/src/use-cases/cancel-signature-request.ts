import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '../task-either.js';
import type { Principal } from '../model/principal.js';
import type { SignatureRequest } from '../model/signature-request.js';
import type { Clock } from '../ports/clock.js';
import type { Command } from './command.js';
import { applyCommand, loadRequest, requireScope } from './policy.js';

/**
 * DRAFT or SENT → CANCELLED; its documents become CANCELLED. Finished requests cannot be cancelled.
 *
 * @example
 * await execute(deps)(cancelSignatureRequest(deps)(me, requestId))();
 */
export const cancelSignatureRequest =
  (deps: { readonly clock: Clock }) =>
  (p: Principal, requestId: string): Command<SignatureRequest> =>
  (tx) =>
    pipe(
      requireScope(p, 'signature_requests:write'),
      TE.chainW(() => loadRequest(tx, p, requestId)),
      TE.chainW((req) => applyCommand(tx, req, { type: 'Cancel' }, deps.clock.now())),
      TE.chainFirstW((req) => tx.documents.setStatusForRequest(p.tenant, req, 'CANCELLED')),
    );
