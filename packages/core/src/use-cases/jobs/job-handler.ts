import type { TaskEither } from 'fp-ts/lib/TaskEither.js';
import type { DomainError } from '../../errors.js';
import type { JobKind, JobOf } from '../../model/job.js';
import type { Command } from '../command.js';

/** A job that failed for a reason outside the domain (a mail server, a renderer). */
export interface JobFailure {
  readonly _tag: 'JobFailure';
  /** True when retrying cannot help: the job is buried at once. */
  readonly permanent: boolean;
  readonly detail: string;
}

export const jobFailure = (detail: string, permanent = false): JobFailure => ({ _tag: 'JobFailure', permanent, detail });

/**
 * Handles one job: does its outside work (mail, rendering) first, then returns the command that records
 * the outcome. The worker commits that command in the same transaction as the job's completion, so the
 * outcome is recorded exactly when the job is done — a crash in between repeats the job, never loses it.
 * Like every command, it must stop at its first failed store write: the worker's transaction defers writes
 * (`TransactionOptions.deferWrites`).
 */
export type JobHandler<in K extends JobKind = JobKind> = (job: JobOf<K>) => TaskEither<DomainError | JobFailure, Command<void>>;

/**
 * A record that set something aside outside the transaction (content staged ahead of it): the worker calls
 * `release` once the record has run or will not run (it failed, the lease was lost, it committed), best effort,
 * never failing. It must leave alone what a committed record made its own (`DocumentContentStore.discard` does).
 */
export type ReleasingCommand = Command<void> & { readonly release: () => Promise<unknown> };

/** `record`, with what to `release` once it has run. */
export const withRelease = (record: Command<void>, release: () => Promise<unknown>): ReleasingCommand => Object.assign((tx: Parameters<Command<void>>[0]) => record(tx), { release });

/** What to call once `record` has run: its `release`, or nothing. */
export const releaseOf = (record: Command<void>): (() => Promise<unknown>) | undefined => (record as Partial<ReleasingCommand>).release;


/** A handler for each kind a worker runs (a kind without one is never claimed). */
export type JobHandlers = { readonly [K in JobKind]?: JobHandler<K> };

/** Nothing to record (the job found nothing left to do). */
export const nothingToRecord: Command<void> = () => async () => ({ _tag: 'Right', right: undefined });
