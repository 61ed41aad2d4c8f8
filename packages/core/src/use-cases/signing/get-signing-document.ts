import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '../../task-either.js';
import type { DomainError } from '../../errors.js';
import { invalidState, notFound } from '../../errors.js';
import type { Clock } from '../../ports/clock.js';
import type { Crypto } from '../../ports/crypto.js';
import type { Stores } from '../../ports/stores.js';
import { finishedKey, uploadKey } from '../jobs/artifacts.js';
import { awaitingSeal } from '../../state-machine.js';
import { isIdentified, loadSigningContext, mayShowAgreement } from './signing-session.js';

/** One original document of the request, for an identified recipient of it, while the request is open. */
export const getSigningDocument =
  (deps: { readonly stores: Stores; readonly crypto: Crypto; readonly clock: Clock }) =>
  (token: string, documentId: string): TE.TaskEither<DomainError, { readonly name: string; readonly bytes: Uint8Array }> =>
    pipe(
      loadSigningContext(deps.stores, deps, token),
      TE.chainW((ctx): TE.TaskEither<DomainError, { readonly name: string; readonly bytes: Uint8Array }> => {
        if (!ctx.request.documentIds.includes(documentId)) return TE.left(notFound('document', documentId));
        if (!isIdentified(ctx.recipient)) return TE.left(invalidState('Identification is required first.'));
        if (!mayShowAgreement(ctx.request, ctx.recipient))
          return TE.left(invalidState(awaitingSeal(ctx.request) ? 'Every signer has signed; the documents are no longer shown here.' : `The request is ${ctx.request.status.toLowerCase()}; its documents are no longer shown here.`));
        return pipe(
          deps.stores.documents.findById(ctx.tenant, documentId),
          TE.chainW((doc) =>
            pipe(
              deps.stores.documentContents.get(ctx.tenant, uploadKey(documentId)),
              TE.chainW((bytes) => (doc === null || bytes === null ? TE.left(notFound('document', documentId)) : TE.right({ name: doc.name, bytes }))),
            ),
          ),
        );
      }),
    );

/** The finished PDF, through any recipient's link, once the request is completed and sealed. */
export const getSigningFinishedDocument =
  (deps: { readonly stores: Stores; readonly crypto: Crypto; readonly clock: Clock }) =>
  (token: string): TE.TaskEither<DomainError, { readonly name: string; readonly bytes: Uint8Array }> =>
    pipe(
      loadSigningContext(deps.stores, deps, token),
      TE.chainW((ctx): TE.TaskEither<DomainError, { readonly name: string; readonly bytes: Uint8Array }> =>
        ctx.request.status !== 'COMPLETED' || ctx.request.finishedSha256 === null || !isIdentified(ctx.recipient)
          ? TE.left(invalidState('The finished document is not available.'))
          : pipe(
              deps.stores.documentContents.get(ctx.tenant, finishedKey(ctx.request.id)),
              TE.chainW((bytes) => (bytes === null ? TE.left(invalidState('The finished document is not available.')) : TE.right({ name: `${ctx.request.title}.pdf`, bytes }))),
            ),
      ),
    );
