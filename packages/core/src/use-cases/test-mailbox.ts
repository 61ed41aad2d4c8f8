import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '../task-either.js';
import type { DomainError } from '../errors.js';
import { notFound } from '../errors.js';
import type { StoredMail } from '../model/mail.js';
import type { Principal } from '../model/principal.js';
import type { Tenant } from '../model/tenant.js';
import type { Clock } from '../ports/clock.js';
import type { IdGenerator } from '../ports/id-generator.js';
import type { MailTransport } from '../ports/mail-transport.js';
import type { Stores } from '../ports/stores.js';
import type { UnitOfWork } from '../ports/unit-of-work.js';
import type { CursorSigner, ListEnvelope } from '../pagination.js';
import type { PageRequest } from './list-page.js';
import { listPage } from './list-page.js';
import { requireScope } from './policy.js';

/**
 * The test mailbox as a transport: test-mode mail is kept in the tenant's mailbox (readable through the
 * API with a test key) instead of reaching anyone. Used when no test SMTP server is configured.
 */
export const testMailboxTransport = (deps: { readonly uow: UnitOfWork; readonly clock: Clock; readonly ids: IdGenerator }, tenant: Tenant): MailTransport => ({
  send: (message) =>
    pipe(
      deps.uow.transaction((tx) => tx.testMailbox.insert({ ...message, id: deps.ids.next('mail'), orgId: tenant.orgId, mode: tenant.mode, createdAt: deps.clock.now().toISOString() })),
      TE.mapLeft((e) => ({ _tag: 'MailFailure' as const, permanent: false, detail: `test mailbox: ${e._tag}` })),
    ),
});

/** Lists the test mailbox; it exists for test keys only (a live key sees no such resource). */
export const listTestMailbox =
  (deps: { readonly stores: Stores; readonly cursors: CursorSigner }) =>
  <B>(p: Principal, page: PageRequest, filter: { readonly to?: string }, present: (m: StoredMail) => B): TE.TaskEither<DomainError, ListEnvelope<B>> =>
    p.tenant.mode !== 'test'
      ? TE.left(notFound('test_mailbox', 'in live mode'))
      : pipe(
          requireScope(p, 'signature_requests:read'),
          TE.chainW(() => listPage(deps.cursors, 'test_mailbox', page, filter, `to=${filter.to ?? ''}`, (q) => deps.stores.testMailbox.list(p.tenant, q), present)),
        );
