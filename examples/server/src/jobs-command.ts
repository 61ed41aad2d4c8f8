import { parseArgs } from 'node:util';
import * as E from 'fp-ts/lib/Either.js';
import type { Clock, JobKind, JobRetry, QueuedJob, Stores } from '@esig/core';
import { JOB_KINDS, MAX_JOB_LIST, jobState, listJobs, retryJobs, requestIdOf } from '@esig/core';

export const JOBS_USAGE = `  esig jobs list [--failed] [--kind <kind>[,<kind>…]] [--request <req_id>] [--limit <n>] [--json]
                                  list background jobs: id, kind, request, state, attempts, next run, last error
  esig jobs retry <job_id>… | --request <req_id>
                                  make failed (backing-off or buried) jobs due now, attempts reset`;

/** A usage error: the CLI prints it with the usage and exits 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export interface JobsCommandIo {
  readonly out: (line: string) => void;
  readonly err: (line: string) => void;
}

/** How to run a job command against the database: opens it, hands over the stores and the clock, closes it. */
export type WithJobStores = <A>(f: (deps: { readonly stores: Stores; readonly clock: Clock }) => Promise<A>) => Promise<A>;

/** Runs Node's argument parser, turning what it refuses into a UsageError. */
const parse = <A>(f: () => A): A => {
  try {
    return f();
  } catch (e) {
    // Node's message names the option ("Unknown option '--x'").
    throw new UsageError(e instanceof Error ? e.message : String(e));
  }
};

const kindsOf = (values: readonly string[]): JobKind[] => {
  const kinds = values.flatMap((v) => v.split(',')).map((k) => k.trim()).filter(Boolean);
  const unknown = kinds.filter((k) => !(JOB_KINDS as readonly string[]).includes(k));
  if (unknown.length > 0) throw new UsageError(`unknown job kind(s): ${unknown.join(', ')} (kinds: ${JOB_KINDS.join(', ')})`);
  return kinds as JobKind[];
};

const limitOf = (v: string | undefined): number => {
  if (v === undefined) return 100;
  if (!/^\d+$/.test(v) || Number(v) < 1 || Number(v) > MAX_JOB_LIST) throw new UsageError(`--limit must be a whole number from 1 to ${MAX_JOB_LIST}`);
  return Number(v);
};

const requestOf = (v: string | undefined): string | null => {
  if (v === undefined) return null;
  if (v.trim() === '') throw new UsageError('--request needs a signature request id (req_…)');
  return v.trim();
};

const oneLine = (s: string) => s.replace(/\s+/g, ' ').trim();

/** A job as `--json` prints it: stable field names, its state at `now` and the request it is about. */
const present = (j: QueuedJob, now: string) => ({
  id: j.id,
  kind: j.kind,
  orgId: j.orgId,
  mode: j.mode,
  requestId: requestIdOf(j),
  state: jobState(j, now),
  attempts: j.attempts,
  nextRunAt: j.buried ? null : j.runAt,
  buried: j.buried,
  lease: j.lease,
  lastError: j.lastError,
  payload: j.payload,
  notes: j.notes,
  createdAt: j.createdAt,
});

const table = (rows: readonly (readonly string[])[]): string[] => {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  // The last column (the error) is not padded: it may be long, and nothing follows it.
  return rows.map((r) => r.map((cell, c) => (c === r.length - 1 ? cell : cell.padEnd(widths[c]!))).join('  ').trimEnd());
};

const listTable = (jobs: readonly QueuedJob[], now: string): string[] =>
  table([
    ['ID', 'KIND', 'REQUEST', 'STATE', 'ATTEMPTS', 'NEXT RUN', 'LAST ERROR'],
    ...jobs.map((j) => {
      const state = jobState(j, now);
      return [
        j.id,
        j.kind,
        requestIdOf(j) ?? '-',
        state === 'running' ? `running (${j.lease!.worker} until ${j.lease!.until})` : state,
        String(j.attempts),
        j.buried ? 'never (buried)' : j.runAt,
        j.lastError === null ? '-' : oneLine(j.lastError),
      ];
    }),
  ]);

const describeRetry = (r: JobRetry): string => {
  const requestId = 'job' in r ? requestIdOf(r.job) : null;
  const about = 'job' in r ? ` (${r.job.kind}${requestId ? `, request ${requestId}` : ''})` : '';
  switch (r.outcome) {
    case 'revived':
      return `${r.id}${about}: due now, attempts reset (last error: ${oneLine(r.job.lastError ?? '-')})`;
    case 'running':
      return `${r.id}${about}: not changed, a worker is running it now (lease until ${r.job.lease?.until ?? '?'})`;
    case 'not-failed':
      return `${r.id}${about}: not changed, it has not failed (next run ${r.job.runAt})`;
    case 'unknown':
      return `${r.id}: not changed, no such job (finished jobs are removed)`;
  }
};

/**
 * `esig jobs list` and `esig jobs retry`: the operator's view of the job queue and the way back for jobs
 * that gave up. Resolves to the exit code; throws UsageError for bad arguments.
 */
export const runJobsCommand = async (sub: string | undefined, args: readonly string[], withStores: WithJobStores, io: JobsCommandIo): Promise<number> => {
  switch (sub) {
    case 'list': {
      const { values } = parse(() =>
        parseArgs({
          args: [...args],
          options: {
            failed: { type: 'boolean' },
            kind: { type: 'string', multiple: true },
            request: { type: 'string' },
            limit: { type: 'string' },
            json: { type: 'boolean' },
          },
          strict: true,
        }),
      );
      const requestId = requestOf(values.request);
      const filter = {
        kinds: kindsOf(values.kind ?? []),
        failedOnly: values.failed === true,
        ...(requestId === null ? {} : { requestId }),
        limit: limitOf(values.limit),
      };
      return withStores(async (deps) => {
        const now = deps.clock.now().toISOString();
        const jobs = await listJobs(deps)(filter)();
        if (E.isLeft(jobs)) throw new Error(`could not list the jobs: ${jobs.left._tag}`, { cause: jobs.left });
        if (values.json === true) io.out(JSON.stringify(jobs.right.map((j) => present(j, now)), null, 2));
        else if (jobs.right.length === 0) io.out('No jobs match.');
        else for (const line of listTable(jobs.right, now)) io.out(line);
        if (jobs.right.length === filter.limit) io.err(`esig: showing the first ${filter.limit} jobs; raise --limit to see more`);
        return 0;
      });
    }
    case 'retry': {
      const { values, positionals } = parse(() => parseArgs({ args: [...args], options: { request: { type: 'string' } }, strict: true, allowPositionals: true }));
      const requestId = requestOf(values.request);
      if (positionals.length === 0 && requestId === null) throw new UsageError('name the jobs to retry (esig jobs retry <job_id>…) or a request (--request <req_id>)');
      return withStores(async (deps) => {
        const done = await retryJobs(deps)({ jobIds: positionals, requestId })();
        if (E.isLeft(done)) throw new Error(`could not retry the jobs: ${done.left._tag}`, { cause: done.left });
        if (done.right.length === 0) {
          io.err(`esig: request ${requestId} has no failed jobs; nothing to retry`);
          return 1;
        }
        for (const r of done.right) io.out(describeRetry(r));
        return done.right.every((r) => r.outcome === 'revived') ? 0 : 1;
      });
    }
    default:
      throw new UsageError(`unknown command "jobs ${sub ?? ''}"`);
  }
};
