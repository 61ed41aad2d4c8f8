import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '../task-either.js';
import type { DomainError } from '../errors.js';
import { invalidState, validationFailed } from '../errors.js';
import type { Document, PageLimits } from '../model/document.js';
import type { Principal } from '../model/principal.js';
import type { SignatureRequest, SigningOrder } from '../model/signature-request.js';
import type { Clock } from '../ports/clock.js';
import type { IdGenerator } from '../ports/id-generator.js';
import type { Stores } from '../ports/stores.js';
import type { Command } from './command.js';
import { withUnread } from './command.js';
import { check, requireScope } from './policy.js';
import { unstorableText } from '../storable-text.js';

export interface CreateSignatureRequestInput {
  readonly title: string;
  readonly documentIds: readonly string[];
  readonly message?: string | null;
  readonly signingOrder?: SigningOrder;
  readonly expiresAt?: string | null;
}

/** At most this many documents per request: one finished PDF must stay a reasonable size. */
export const MAX_DOCUMENTS_PER_REQUEST = 20;

/**
 * Creates a DRAFT request over already-uploaded documents of the same org and mode. Each document joins at
 * most one request, so a document already in another request is refused; together the documents may have
 * at most `pageLimits.maxPagesPerRequest` pages, since sealing copies and stamps every one of them.
 *
 * Its unread form (see `Unread`) writes the request and links its documents without reading them first: the
 * link is refused, and nothing commits, unless every document is the tenant's, free, and within the pages
 * allowed. The command itself reads them, and says which one is missing or taken, or how many pages they have.
 *
 * @example
 * const request = await execute(deps)(createSignatureRequest(deps)(me, { title: 'NDA', documentIds: [documentId], signingOrder: 'sequential' }))();
 */
export const createSignatureRequest =
  (deps: { readonly clock: Clock; readonly ids: IdGenerator; readonly pageLimits: PageLimits }) =>
  (p: Principal, input: CreateSignatureRequestInput): Command<SignatureRequest> => {
    const title = input.title.trim();
    const ids = input.documentIds;
    const limits = { maxPages: deps.pageLimits.maxPagesPerRequest };
    // What needs no store: the caller's scope, and the input's own shape.
    const inputValid = (now: Date) =>
      pipe(
        requireScope(p, 'signature_requests:write'),
        TE.chainW(() =>
          check([
            unstorableText(input),
            title.length === 0 || title.length > 255 ? { path: 'title', message: 'must have 1 to 255 characters' } : null,
            ids.length === 0 || ids.length > MAX_DOCUMENTS_PER_REQUEST
              ? { path: 'documentIds', message: `must list 1 to ${MAX_DOCUMENTS_PER_REQUEST} documents` }
              : null,
            new Set(ids).size !== ids.length ? { path: 'documentIds', message: 'must not repeat a document' } : null,
            input.expiresAt != null && input.expiresAt <= now.toISOString()
              ? { path: 'expiresAt', message: 'must lie in the future' }
              : null,
          ]),
        ),
      );
    // The documents linked and the request written, all or none: the link first, so that when it is refused nothing
    // else was written anywhere (a port moved out of the database by `overridePorts` included).
    const written = (tx: Stores, now: Date): TE.TaskEither<DomainError, SignatureRequest> => {
      const req: SignatureRequest = {
        id: deps.ids.next('req'),
        orgId: p.tenant.orgId,
        mode: p.tenant.mode,
        title,
        message: input.message ?? null,
        status: 'DRAFT',
        documentIds: [...ids],
        recipients: [],
        fields: [],
        signingOrder: input.signingOrder ?? 'parallel',
        requestedSignatureLevel: 'SES',
        expiresAt: input.expiresAt ?? null,
        createdAt: now.toISOString(),
        sentAt: null,
        completedAt: null,
        cancelledAt: null,
        declinedAt: null,
        expiredAt: null,
        certificateId: null,
        finishedSha256: null,
        version: 1,
      };
      return pipe(
        tx.documents.attachToRequest(p.tenant, ids, req.id, limits),
        TE.chainW(() => tx.signatureRequests.insert(req)),
        TE.map(() => req),
      );
    };
    const command = (tx: Stores): TE.TaskEither<DomainError, SignatureRequest> => {
      const now = deps.clock.now();
      return pipe(
        inputValid(now),
        TE.chainW(() => tx.documents.findByIds(p.tenant, ids)),
        TE.chainW((docs): TE.TaskEither<DomainError, readonly Document[]> => {
          const missing = ids.findIndex((id) => !docs.some((d) => d.id === id));
          if (missing >= 0)
            return TE.left(validationFailed([{ path: `documentIds.${missing}`, message: `no document ${ids[missing]}` }]));
          const pages = docs.reduce((n, d) => n + d.pageCount, 0);
          const max = limits.maxPages;
          if (pages > max)
            return TE.left(
              validationFailed(
                [{ path: 'documentIds', message: `the documents have ${pages} pages together; a request may have at most ${max}` }],
                `The documents have ${pages} pages together; a request may have at most ${max}.`,
              ),
            );
          const taken = docs.find((d) => d.signatureRequestId !== null);
          return taken ? TE.left(invalidState(`Document ${taken.id} already belongs to signature request ${taken.signatureRequestId}.`)) : TE.right(docs);
        }),
        TE.chainW(() => written(tx, now)),
      );
    };
    return withUnread(command, {
      run: (tx) => {
        const now = deps.clock.now();
        return pipe(
          inputValid(now),
          TE.chainW(() => written(tx, now)),
        );
      },
      // The link refused: a document missing, taken or too long, which the command reads to tell.
      refused: (e) => e._tag === 'ConcurrentModification' && e.resource === 'document',
    });
  };
