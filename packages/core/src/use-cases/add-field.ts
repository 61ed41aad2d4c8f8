import { pipe } from 'fp-ts/function';
import * as TE from 'fp-ts/TaskEither';
import { validationFailed } from '../errors';
import type { Principal } from '../model/principal';
import type { Field, FieldType } from '../model/signature-request';
import type { Clock } from '../ports/clock';
import type { IdGenerator } from '../ports/id-generator';
import type { Command } from './command';
import { applyCommand, check, loadRequest, requireScope } from './policy';

export interface AddFieldInput {
  readonly documentId: string;
  readonly recipientId: string;
  readonly type: FieldType;
  readonly page: number;
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
  readonly required?: boolean;
}

/** Places a field for a signer on a page of one of the request's documents; only while DRAFT. */
export const addField =
  (deps: { readonly clock: Clock; readonly ids: IdGenerator }) =>
  (p: Principal, requestId: string, input: AddFieldInput): Command<Field> =>
  (tx) =>
    pipe(
      requireScope(p, 'signature_requests:write'),
      TE.chainW(() =>
        check([
          Number.isInteger(input.page) && input.page >= 1 ? null : { path: 'page', message: 'must be an integer ≥ 1' },
          input.x >= 0 ? null : { path: 'x', message: 'must be ≥ 0' },
          input.y >= 0 ? null : { path: 'y', message: 'must be ≥ 0' },
          input.width > 0 ? null : { path: 'width', message: 'must be > 0' },
          input.height > 0 ? null : { path: 'height', message: 'must be > 0' },
        ]),
      ),
      TE.chainW(() => loadRequest(tx, p, requestId)),
      TE.chainW((req) =>
        pipe(
          tx.documents.findById(p.tenant, input.documentId),
          TE.chainW((doc) =>
            doc !== null && input.page > doc.pageCount
              ? TE.left(validationFailed([{ path: 'page', message: `the document has ${doc.pageCount} page(s)` }]))
              : TE.right(req),
          ),
        ),
      ),
      TE.chainW((req) => {
        const field: Field = {
          id: deps.ids.next('fld'),
          documentId: input.documentId,
          recipientId: input.recipientId,
          type: input.type,
          page: input.page,
          x: input.x,
          y: input.y,
          width: input.width,
          height: input.height,
          required: input.required ?? true,
          value: null,
        };
        return pipe(applyCommand(tx, req, { type: 'AddField', field }, deps.clock.now()), TE.map(() => field));
      }),
    );
