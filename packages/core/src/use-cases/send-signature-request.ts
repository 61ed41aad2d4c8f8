import { pipe } from 'fp-ts/function';
import * as TE from 'fp-ts/TaskEither';
import type { Principal } from '../model/principal';
import type { SignatureRequest } from '../model/signature-request';
import type { Clock } from '../ports/clock';
import type { IdGenerator } from '../ports/id-generator';
import type { Command } from './command';
import { applyCommand, loadRequest, requireScope } from './policy';

/**
 * DRAFT → SENT. In one transaction: the new state, the documents marked PENDING, and a `request.sent`
 * event in the outbox, from which the invitations are produced. Sending twice is an invalid state.
 */
export const sendSignatureRequest =
  (deps: { readonly clock: Clock; readonly ids: IdGenerator }) =>
  (p: Principal, requestId: string): Command<SignatureRequest> =>
  (tx) => {
    const now = deps.clock.now();
    return pipe(
      requireScope(p, 'signature_requests:write'),
      TE.chainW(() => loadRequest(tx, p, requestId)),
      TE.chainW((req) => applyCommand(tx, req, { type: 'Send' }, now)),
      TE.chainFirstW((req) => tx.documents.setStatusForRequest(p.tenant, req.id, 'PENDING')),
      TE.chainFirstW((req) =>
        tx.events.append({
          id: deps.ids.next('evt'),
          orgId: req.orgId,
          mode: req.mode,
          type: 'request.sent',
          createdAt: now.toISOString(),
          redeliveryOf: null,
          data: {
            request_id: req.id,
            status: req.status,
            sent_at: req.sentAt,
            signing_order: req.signingOrder,
            document_ids: req.documentIds,
            recipient_ids: req.recipients.map((r) => r.id),
          },
        }),
      ),
    );
  };
