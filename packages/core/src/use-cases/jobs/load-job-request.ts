import { pipe } from 'fp-ts/function';
import * as TE from 'fp-ts/TaskEither';
import type { DomainError } from '../../errors';
import type { Job } from '../../model/job';
import type { SignatureRequest } from '../../model/signature-request';
import type { Tenant } from '../../model/tenant';
import type { Stores } from '../../ports/stores';

export const tenantOf = (job: Job): Tenant => ({ orgId: job.orgId, mode: job.mode });

/** The request a job is about, or null when it no longer exists. */
export const loadJobRequest = (stores: Stores, job: Job): TE.TaskEither<DomainError, SignatureRequest | null> =>
  pipe(stores.signatureRequests.findById(tenantOf(job), job.payload.requestId ?? ''));
