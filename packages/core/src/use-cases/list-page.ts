import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '../task-either.js';
import type { DomainError } from '../errors.js';
import { validationFailed } from '../errors.js';
import type { CursorContext, CursorSigner, ListEnvelope, SortOrder } from '../pagination.js';
import { DEFAULT_PAGE_LIMIT, decodeCursor, isValidLimit, toEnvelope } from '../pagination.js';
import type { KeysetPage, KeysetPosition, KeysetQuery, StoreResult } from '../ports/store-result.js';

/** The paging part of every list call, as a client sends it. */
export interface PageRequest {
  readonly limit?: number;
  readonly order?: SortOrder;
  readonly cursor?: string;
}

const position = (a: { readonly createdAt: string; readonly id: string }): KeysetPosition => ({
  createdAt: a.createdAt,
  id: a.id,
});

/**
 * One page of any list: checks the limit (rejected, never clamped), verifies that the cursor belongs to
 * this list, order and filter, asks the store for the rows after it, and builds the envelope.
 */
export const listPage = <A extends { readonly createdAt: string; readonly id: string }, F, B>(
  cursors: CursorSigner,
  list: string,
  req: PageRequest,
  filter: F,
  filterText: string,
  fetch: (q: KeysetQuery<F>) => StoreResult<KeysetPage<A>>,
  present: (a: A) => B,
): TE.TaskEither<DomainError, ListEnvelope<B>> => {
  const limit = req.limit ?? DEFAULT_PAGE_LIMIT;
  if (!isValidLimit(limit))
    return TE.left(validationFailed([{ path: 'limit', message: 'must be an integer from 1 to 100' }]));
  const ctx: CursorContext = { list, order: req.order ?? 'desc', filter: filterText };
  const after = req.cursor === undefined ? E.right(null) : decodeCursor(cursors, req.cursor, ctx);
  return pipe(
    TE.fromEither<DomainError, KeysetPosition | null>(after),
    TE.chainW((pos) => fetch({ limit, order: ctx.order, after: pos, filter })),
    TE.map((page) => toEnvelope(cursors, ctx, limit, page, position, present)),
  );
};
