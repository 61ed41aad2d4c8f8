import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '../../task-either.js';
import type { DomainError } from '../../errors.js';
import type { Job } from '../../model/job.js';
import type { SignatureRequest } from '../../model/signature-request.js';
import type { Tenant } from '../../model/tenant.js';
import type { Stores } from '../../ports/stores.js';

export const tenantOf = (job: Pick<Job, 'orgId' | 'mode'>): Tenant => ({ orgId: job.orgId, mode: job.mode });

/** The request a job is about, or null when it no longer exists. */
export const loadJobRequest = (
  stores: Stores,
  job: Pick<Job, 'orgId' | 'mode'> & { readonly payload: { readonly requestId: string } },
): TE.TaskEither<DomainError, SignatureRequest | null> => pipe(stores.signatureRequests.findById(tenantOf(job), job.payload.requestId));
