import type { Job, QueuedJob } from '@esig/core';
import { JOB_KINDS } from '@esig/core';
import * as t from 'io-ts';
import type { ColumnCodecs } from '../columns.js';
import { Int, ModeC, nullable, oneOf } from '../decode.js';

export const JobKindC = oneOf(JOB_KINDS, 'JobKind');
export const JobPayloadC = t.readonly(t.record(t.string, t.string));

export const jobRow = (c: ColumnCodecs) =>
  t.type({
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

export const toJob = (r: t.TypeOf<ReturnType<typeof jobRow>>): Job => ({
  id: r.id,
  kind: r.kind,
  orgId: r.org_id,
  mode: r.mode,
  payload: r.payload,
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
    t.type({
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
