import type { SignatureRequest, StoreError } from '@esig/core';
import { REQUEST_STATUSES, storeFailure } from '@esig/core';
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import type { ColumnCodecs } from '../columns.js';
import { Int, ModeC, RowDecodeError, oneOf, rowType } from '../decode.js';

export const RequestStatusC = oneOf(REQUEST_STATUSES, 'RequestStatus');

/**
 * A signature_requests row: the aggregate whole in `data` (checked with the adapter's own codec, as the
 * dialects read older aggregates differently), and the columns copied out of it for indexes and locking.
 */
export const requestRow = (c: ColumnCodecs, data: t.Type<SignatureRequest, unknown, unknown>) =>
  rowType({
    id: t.string,
    org_id: t.string,
    mode: ModeC,
    status: RequestStatusC,
    created_at: c.timestamp,
    version: Int,
    data: c.json(data),
  });

/**
 * The columns copied out of `data` must agree with it; a disagreement means the row was edited by hand
 * or half-migrated, and serving either value would be a guess.
 */
export const consistentRequest = (r: t.TypeOf<ReturnType<typeof requestRow>>): E.Either<StoreError, SignatureRequest> => {
  const d = r.data;
  const clashes = (
    [
      ['id', r.id, d.id],
      ['org_id', r.org_id, d.orgId],
      ['mode', r.mode, d.mode],
      ['status', r.status, d.status],
      ['created_at', r.created_at, d.createdAt],
      ['version', r.version, d.version],
    ] as const
  ).filter(([, column, inData]) => column !== inData);
  return clashes.length === 0
    ? E.right(d)
    : E.left(
        storeFailure(
          new RowDecodeError(
            `signature_requests row ${r.id}`,
            clashes.map(([name, column, inData]) => `column ${name} is ${String(column)} but data says ${String(inData)}`),
          ),
        ),
      );
};
