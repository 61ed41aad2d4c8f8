import type { DedupeKeyMatch, Job, JobKind, JobNotes, JobPayloads, JobWork, QueuedJob, StoreError } from '@esig/core';
import { JOB_KINDS, isDedupeKeyPrefix, storeFailure } from '@esig/core';
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import type { ColumnCodecs } from '../columns.js';
import { Int, ModeC, nullable, oneOf, rowType } from '../decode.js';

export const JobKindC = oneOf(JOB_KINDS, 'JobKind');
/** The `payload` column: one JSON object of strings, the kind's fields and the notes of earlier runs side by side. */
export const JobPayloadC = t.readonly(t.record(t.string, t.string));

/** A whole number kept as text in the payload (`"2"`). */
const Count = new t.Type<number, string, unknown>(
  'Count',
  (u): u is number => typeof u === 'number' && Number.isSafeInteger(u),
  (u, c) => (typeof u === 'string' && /^\d{1,9}$/.test(u) ? t.success(Number(u)) : t.failure(u, c, 'must be a whole number as text')),
  String,
);

const withRequest = t.exact(rowType({ requestId: t.string }));
const toRecipient = t.exact(rowType({ requestId: t.string, recipientId: t.string }));

/** Each kind's payload as stored: exactly its fields (the notes beside them are read apart). */
const PAYLOADS: { readonly [K in JobKind]: t.Type<JobPayloads[K], Record<string, string>, unknown> } = {
  'mail.invite': toRecipient,
  'mail.remind': toRecipient,
  'mail.completed': toRecipient,
  'seal.complete': withRequest,
  seal: withRequest,
  expire: withRequest,
  'remind.auto': t.exact(rowType({ requestId: t.string, round: Count })),
  'webhook.dispatch': t.exact(rowType({ eventId: t.string })),
  'webhook.deliver': t.exact(rowType({ deliveryId: t.string })),
};
const NotesC = t.exact(t.partial({ mailAcceptedAt: t.string }));

/** The `payload` column's object for a job: its kind's fields as text (notes are merged in later by `annotate`). */
export const storedPayload = (work: JobWork): Record<string, string> => PAYLOADS[work.kind].encode(work.payload as never);

/** The stored payload object of a new job, checked to read back as its kind's payload (what is written can be read). */
export const JobWorkC = new t.Type<JobWork, JobWork, unknown>(
  'JobWork',
  (u): u is JobWork => typeof u === 'object' && u !== null && 'kind' in u,
  (u, c) => {
    const w = u as JobWork;
    if (!(JOB_KINDS as readonly unknown[]).includes(w.kind)) return t.failure(u, c, 'is not a job kind');
    const read = workOf(w.kind, storedPayload(w), c);
    return read._tag === 'Right' ? t.success(w) : t.failure(u, c, `its payload does not fit kind ${w.kind}`);
  },
  t.identity,
);

/** A kind and its stored payload object, read as the kind's payload and the notes. */
const workOf = (kind: JobKind, stored: Readonly<Record<string, string>>, c: t.Context): t.Validation<{ readonly work: JobWork; readonly notes: JobNotes }> => {
  const payload = PAYLOADS[kind].validate(stored, [...c, { key: 'payload', type: PAYLOADS[kind], actual: stored }]);
  if (payload._tag === 'Left') return payload;
  const notes = NotesC.validate(stored, c);
  if (notes._tag === 'Left') return notes;
  return t.success({ work: { kind, payload: payload.right } as JobWork, notes: notes.right });
};

const jobRowBase = (c: ColumnCodecs) =>
  rowType({
    id: t.string,
    kind: JobKindC,
    org_id: t.string,
    mode: ModeC,
    payload: c.json(JobPayloadC),
    run_at: c.timestamp,
    attempts: Int,
    dedupe_key: nullable(t.string),
    created_at: c.timestamp,
    last_error: nullable(t.string),
  });
type JobRowBase = t.TypeOf<ReturnType<typeof jobRowBase>>;

/** A jobs row, its payload decoded by its kind: a row whose payload lacks a field its kind needs is refused. */
export const jobRow = (c: ColumnCodecs) => {
  const base = jobRowBase(c);
  return new t.Type<JobRowBase & { readonly work: JobWork; readonly notes: JobNotes }, unknown, unknown>(
    'JobRow',
    (u): u is JobRowBase & { readonly work: JobWork; readonly notes: JobNotes } => base.is(u) && 'work' in (u as object),
    (u, ctx) => {
      const row = base.validate(u, ctx);
      if (row._tag === 'Left') return row;
      const work = workOf(row.right.kind, row.right.payload, ctx);
      // Object.assign, not `{ ...row, ...work }`: on Node 20 a literal that spreads one object and then adds
      // keys it lacks takes V8's slow path (about 20 µs and 3 KB per job read, against well under one).
      return work._tag === 'Left' ? work : t.success(Object.assign({}, row.right, work.right));
    },
    (a) => a,
  );
};

// Object.assign rather than `{ ...r.work, id, … }`, for the same reason.
export const toJob = (r: t.TypeOf<ReturnType<typeof jobRow>>): Job =>
  Object.assign({}, r.work, {
    id: r.id,
    orgId: r.org_id,
    mode: r.mode,
    notes: r.notes,
    runAt: r.run_at,
    attempts: r.attempts,
    dedupeKey: r.dedupe_key,
    createdAt: r.created_at,
    lastError: r.last_error,
  });

/** A jobs row with its burial and lease, as an operator's listing reads it. */
export const queuedJobRow = (c: ColumnCodecs) =>
  t.intersection([
    jobRow(c),
    rowType({
      dead: c.flag,
      locked_by: nullable(t.string),
      locked_until: nullable(c.timestamp),
    }),
  ]);

export const toQueuedJob = (r: t.TypeOf<ReturnType<typeof queuedJobRow>>): QueuedJob => ({
  ...toJob(r),
  buried: r.dead,
  lease: r.locked_by === null || r.locked_until === null ? null : { worker: r.locked_by, until: r.locked_until },
});

/**
 * The range of dedupe keys that start with `prefix`, for an index range scan: `from <= key < to`. Both stores
 * compare keys byte by byte (SQLite's BINARY, PostgreSQL's "C" collation), so every key with the prefix lies
 * in it, and only those. The prefix is printable ASCII (`isDedupeKeyPrefix`), so the bound above
 * is the prefix with its last character moved on by one.
 */
const dedupePrefixRange = (prefix: string): E.Either<StoreError, { readonly from: string; readonly to: string }> =>
  isDedupeKeyPrefix(prefix)
    ? E.right({ from: prefix, to: prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1) })
    : E.left(storeFailure(new RangeError(`a dedupe key prefix is 1 or more printable ASCII characters, got ${JSON.stringify(prefix)}`)));

/** A `DedupeKeyMatch` as the stores query it: one key, or the range of a prefix (see `dedupePrefixRange`). */
export const dedupeKeyBounds = (match: DedupeKeyMatch): E.Either<StoreError, { readonly key: string } | { readonly from: string; readonly to: string }> =>
  'key' in match ? E.right({ key: match.key }) : dedupePrefixRange(match.prefix);
