import { pipe } from 'fp-ts/lib/function.js';
import * as T from 'fp-ts/lib/Task.js';
import * as TE from '../../task-either.js';
import type { Job } from '../../model/job.js';
import type { Clock } from '../../ports/clock.js';
import type { Stores } from '../../ports/stores.js';

/**
 * Sends a mail job's message unless an earlier run of the same job already had it accepted, and notes the
 * acceptance on the job in a commit of its own the moment the server takes the message. The job's outcome
 * is recorded later, in the job's completion; if that fails (a conflict, a lost database connection, a
 * crash) the job runs again, finds the note and only records the outcome, instead of mailing the recipient
 * a second time. What remains at-least-once is the window between the server's acceptance and the note's
 * commit: a worker that dies inside it sends the message again on the next run, with the same Message-ID
 * (`<jobId@esig>`), which lets a receiving system recognise the copy.
 *
 * A note that cannot be written is not an error: the outcome's commit that follows records the same
 * fact for good, and only if both fail is the message sent again.
 */
export const sendMailOnce = <E>(deps: { readonly stores: Stores; readonly clock: Clock }, job: Pick<Job, 'id' | 'notes'>, send: () => TE.TaskEither<E, void>): TE.TaskEither<E, void> =>
  job.notes.mailAcceptedAt !== undefined
    ? TE.right(undefined)
    : pipe(
        send(),
        TE.chainFirstTaskK(() =>
          pipe(
            deps.stores.jobs.annotate(job.id, { mailAcceptedAt: deps.clock.now().toISOString() }),
            T.map(() => undefined),
          ),
        ),
      );
