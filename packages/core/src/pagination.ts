import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import type { ValidationFailed } from './errors.js';
import { validationFailed } from './errors.js';
import type { KeysetPage, KeysetPosition } from './ports/store-result.js';

export const DEFAULT_PAGE_LIMIT = 25;
export const MAX_PAGE_LIMIT = 100;

export type SortOrder = 'asc' | 'desc';

/** What a cursor is bound to: it is valid only for the same list, order and filters. */
export interface CursorContext {
  readonly list: string;
  readonly order: SortOrder;
  /** Canonical text of the filters in force (e.g. `status=COMPLETED`). */
  readonly filter: string;
}

export interface CursorPayload extends CursorContext, KeysetPosition {}

/** Signs cursor payloads so a client cannot forge or alter one (keyed MAC, constant-time check). */
export interface CursorSigner {
  sign(data: string): string;
  verify(data: string, mac: string): boolean;
}

export interface PageInfo {
  readonly limit: number;
  readonly order: SortOrder;
  readonly hasMore: boolean;
  readonly nextCursor: string | null;
}

/** Exactly the spec's list envelope: `data` and `pageInfo`, nothing else. */
export interface ListEnvelope<A> {
  readonly data: readonly A[];
  readonly pageInfo: PageInfo;
}

// Cursor text is ASCII by construction (ids, ISO times, list names, filter values), so the web-standard
// btoa/atob suffice and the core stays free of platform buffers.
const toBase64Url = (s: string) => btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
const fromBase64Url = (s: string) => atob(s.replace(/-/g, '+').replace(/_/g, '/'));

const bad = (detail: string) => validationFailed([{ path: 'cursor', message: detail }], detail);

/** `<base64url(payload json)>.<mac>`: opaque to clients, tamper-evident to us. */
export const encodeCursor = (signer: CursorSigner, p: CursorPayload): string => {
  const json = JSON.stringify([p.list, p.order, p.filter, p.createdAt, p.id]);
  // JSON.stringify escapes control characters but not DEL (0x7f), which is ASCII all the same.
  if (!/^[\x00-\x7f]*$/.test(json)) throw new Error('cursor payload must be ASCII');
  const body = toBase64Url(json);
  return `${body}.${signer.sign(body)}`;
};

/** Reads a cursor back, refusing one that was altered or that belongs to another list, order or filter. */
export const decodeCursor = (
  signer: CursorSigner,
  cursor: string,
  expected: CursorContext,
): E.Either<ValidationFailed, KeysetPosition> => {
  const dot = cursor.indexOf('.');
  if (dot <= 0) return E.left(bad('The cursor is malformed.'));
  const body = cursor.slice(0, dot);
  if (!signer.verify(body, cursor.slice(dot + 1))) return E.left(bad('The cursor is not valid.'));
  return pipe(
    // A correctly signed body always parses; failing here means the signing key itself leaked or changed.
    E.tryCatch((): unknown => JSON.parse(fromBase64Url(body)), () => bad('The cursor is not valid.')),
    E.filterOrElse(
      (parsed): parsed is [string, string, string, string, string] => Array.isArray(parsed) && parsed.length === 5 && parsed.every((x) => typeof x === 'string'),
      () => bad('The cursor is not valid.'),
    ),
    E.filterOrElse(
      ([list, order, filter]) => list === expected.list && order === expected.order && filter === expected.filter,
      () => bad('The cursor belongs to another list, order or filter.'),
    ),
    E.map(([, , , createdAt, id]) => ({ createdAt, id })),
  );
};

/** Builds the envelope from a store page; the next cursor points at the last row of this page. */
export const toEnvelope = <A, B>(
  signer: CursorSigner,
  ctx: CursorContext,
  limit: number,
  page: KeysetPage<A>,
  position: (a: A) => KeysetPosition,
  present: (a: A) => B,
): ListEnvelope<B> => {
  const last = page.items[page.items.length - 1];
  return {
    data: page.items.map(present),
    pageInfo: {
      limit,
      order: ctx.order,
      hasMore: page.hasMore,
      nextCursor: page.hasMore && last !== undefined ? encodeCursor(signer, { ...ctx, ...position(last) }) : null,
    },
  };
};

export const isValidLimit = (n: number): boolean => Number.isInteger(n) && n >= 1 && n <= MAX_PAGE_LIMIT;
