import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '../task-either.js';
import type { FieldProblem } from '../errors.js';
import { validationFailed } from '../errors.js';
import type { Document, PageSize } from '../model/document.js';
import { boxFitsPage } from '../model/document.js';
import type { Principal } from '../model/principal.js';
import type { Field, FieldType } from '../model/signature-request.js';
import type { Clock } from '../ports/clock.js';
import type { IdGenerator } from '../ports/id-generator.js';
import type { Command } from './command.js';
import { applyCommand, check, loadRequest, requireScope } from './policy.js';
import { unstorableText } from '../storable-text.js';

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

const pts = (n: number) => `${Math.round(n * 100) / 100} points`;

/** Where a box sticks out of its page, addressed to the input to change. */
const outsidePage = (input: AddFieldInput, size: PageSize): FieldProblem[] => {
  if (boxFitsPage(input, size)) return [];
  const problems: FieldProblem[] = [];
  if (!boxFitsPage({ ...input, y: 0, height: 0 }, size))
    problems.push({ path: input.x >= size.width ? 'x' : 'width', message: `x + width must be at most the page's width, ${pts(size.width)}` });
  if (!boxFitsPage({ ...input, x: 0, width: 0 }, size))
    problems.push({ path: input.y >= size.height ? 'y' : 'height', message: `y + height must be at most the page's height, ${pts(size.height)}` });
  return problems;
};

/** Problems with placing the field on `doc`: a page it does not have, or a box outside the page. */
const placementProblems = (doc: Document, input: AddFieldInput): FieldProblem[] => {
  if (input.page > doc.pageCount) return [{ path: 'page', message: `the document has ${doc.pageCount} page(s)` }];
  // Documents stored before page sizes were recorded have none; their fields are placed unchecked.
  const size = doc.pageSizes?.[input.page - 1];
  return size === undefined ? [] : outsidePage(input, size);
};

/**
 * Places a field for a signer on a page of one of the request's documents; only while DRAFT. The box
 * (points, origin top-left of the page as displayed) must lie inside the page.
 *
 * @example
 * await execute(deps)(addField(deps)(me, requestId, { documentId, recipientId, type: 'signature', page: 1, x: 72, y: 600, width: 200, height: 50 }))();
 */
export const addField =
  (deps: { readonly clock: Clock; readonly ids: IdGenerator }) =>
  (p: Principal, requestId: string, input: AddFieldInput): Command<Field> =>
  (tx) =>
    pipe(
      requireScope(p, 'signature_requests:write'),
      TE.chainW(() =>
        check([
          unstorableText(input),
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
          TE.chainW((doc) => {
            const problems = doc === null ? [] : placementProblems(doc, input);
            return problems.length > 0 ? TE.left(validationFailed(problems, problems.map((p) => `${p.path}: ${p.message}.`).join(' '))) : TE.right(req);
          }),
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
