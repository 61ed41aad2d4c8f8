/**
 * What `bench:webhooks` and `bench:webhooks-pair` set up alike: the environment of an `esig worker` that
 * delivers to the bench's HTTPS receiver, an endpoint at that receiver, and backlogs of events committed from
 * the bench's own process.
 */
import { readFileSync } from 'node:fs';
import * as E from 'fp-ts/lib/Either.js';
import * as TE from 'fp-ts/lib/TaskEither.js';
import { pipe } from 'fp-ts/lib/function.js';
import type { DomainEvent, IdGenerator, UnitOfWork } from '@esig/core';
import { createWebhookEndpoint } from '@esig/core';
import { recordEvent } from '@esig/core/internal';
import { createAesGcmSecretBox, nodeCrypto, systemClock } from '@esig/runtime-node';
import type { Database } from '@esig/server';
import { createHttpsWebhookSender } from '@esig/webhook-https';

/** The tenant every event and endpoint of these benches belongs to. */
export const BENCH_TENANT = { orgId: 'org_bench', mode: 'test' as const };

export const must = async <A>(te: TE.TaskEither<{ _tag: string }, A>): Promise<A> => {
  const r = await te();
  if (E.isLeft(r)) throw new Error(JSON.stringify(r.left).slice(0, 300));
  return r.right;
};

/** The environment of a worker on `databaseUrl` that may deliver to the receiver (loopback, its own CA) with `loops` job loops. */
export const workerEnv = (o: { databaseUrl: string; masterKey: Buffer; certFile: string; loops: number; sqlite: boolean }): NodeJS.ProcessEnv => ({
  ...process.env,
  ESIG_DATABASE_URL: o.databaseUrl,
  ESIG_MASTER_KEY: o.masterKey.toString('hex'),
  ESIG_WEBHOOK_ALLOW_HOSTS: '127.0.0.1/32,localhost',
  ESIG_WEBHOOK_CA_FILE: o.certFile,
  ESIG_LOG_LEVEL: 'warn',
  ESIG_WEBHOOK_CONCURRENCY: String(o.loops),
  // The bench commits the events from its own process: PostgreSQL wakes the workers (NOTIFY); a SQLite file
  // has no such signal between processes, so there the workers poll, often.
  ...(o.sqlite ? { ESIG_WORKER_POLL_MS: '20' } : {}),
});

/** An endpoint at `url`, subscribed to document.created, made through the use case as a user's would be. */
export const createBenchEndpoint = async (db: Database, ids: IdGenerator, masterKey: Buffer, certFile: string, url: string): Promise<void> => {
  const sender = createHttpsWebhookSender({ allowHosts: ['127.0.0.1/32', 'localhost'], extraCa: readFileSync(certFile) });
  const deps = { stores: db.stores, uow: db.uow, clock: systemClock, ids, crypto: nodeCrypto, secrets: createAesGcmSecretBox(masterKey), sender, retryScale: 1, random: Math.random };
  const cmd = await must(createWebhookEndpoint(deps)({ tenant: BENCH_TENANT, scopes: ['*'], credential: { kind: 'api_key', keyId: 'bench' } }, { url, events: ['document.created'] }));
  await must(db.uow.transaction(cmd));
};

/** Commits `count` document.created events in one transaction, each recorded as a use case records it; the events. */
export const commitEvents = async (uow: UnitOfWork, ids: IdGenerator, count: number): Promise<DomainEvent[]> => {
  const made = Array.from(
    { length: count },
    (): DomainEvent => ({ id: ids.next('evt'), orgId: BENCH_TENANT.orgId, mode: BENCH_TENANT.mode, type: 'document.created', createdAt: new Date().toISOString(), redeliveryOf: null, data: { document_id: ids.next('doc'), status: 'UPLOADED' } }),
  );
  await must(uow.transaction((tx) => pipe(made, TE.traverseSeqArray((e) => recordEvent(tx, ids, e)))));
  return made;
};
