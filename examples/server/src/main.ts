import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import type { DependencyContainer } from 'tsyringe';
import * as E from 'fp-ts/lib/Either.js';
import type { IssuedKey, JobHandlers, JobKind, NewJobKinds, Org } from '@esig/core';
import { JOB_KINDS, STAGED_CONTENT_PURGE_BATCH, concerns, purgeExpiredIdempotencyRecords, purgeStagedContent, purgeUnusedOAuthClients } from '@esig/core';
import type { RunningWorker } from '@esig/runtime-node';
import { startPurger, startWorker } from '@esig/runtime-node';
import type { ServerConfig } from './config.js';
import { ConfigError, loadConfig } from './config.js';
import { buildContainer } from './container.js';
import { openDatabase } from './database.js';
import { createKey } from './operator.js';
import { T } from './tokens.js';
import { closesGracefully } from './graceful-close.js';

/*
 * The server's lifecycle: start the HTTP server and the in-process workers on a wired container, or the
 * workers alone, and close everything in order. The wiring is in container.ts, the master key in
 * master-key.ts, the operator's one-shot tasks in operator.ts.
 */

/** The job kinds of webhook delivery: their loops are a worker of their own (ESIG_WEBHOOK_CONCURRENCY). */
const WEBHOOK_KINDS: ReadonlySet<string> = new Set<JobKind>(['webhook.deliver', 'webhook.dispatch']);

/**
 * How often the workers delete idempotency records past their 24 hours. Every process with workers does it
 * (deleting what another has deleted costs nothing); a record waits at most this long past its expiry.
 */
export const IDEMPOTENCY_PURGE_INTERVAL_MS: number = 10 * 60_000;
/** How often registered OAuth clients that never reached consent are looked for (see UNUSED_OAUTH_CLIENT_TTL_MS). */
export const OAUTH_CLIENT_PURGE_INTERVAL_MS: number = 60 * 60_000;
/** Between runs of the purge of staged content never stored (`purgeStagedContent`). */
export const STAGED_CONTENT_PURGE_INTERVAL_MS: number = 10 * 60_000;

/**
 * Starts the background workers of this process: one for webhook deliveries, with ESIG_WEBHOOK_CONCURRENCY
 * loops, and one for the rest (mail, sealing, expiry, reminders), with ESIG_WORKER_CONCURRENCY. Deliveries
 * are many, small and wait on the network, so many loops pay (on SQLite their claims and outcomes share
 * commits); a seal holds a request's PDFs in memory while it runs, so its loops stay few. And a backlog of
 * deliveries to slow receivers never delays a signer's mail or a seal.
 */
export const startWorkers = async (c: DependencyContainer, config: ServerConfig): Promise<RunningWorker & { stopListening: () => Promise<void> }> => {
  const handlers = c.resolve(T.JobHandlers);
  const only = (keep: (kind: string) => boolean): JobHandlers => Object.fromEntries(Object.entries(handlers).filter(([kind]) => keep(kind)));
  const start = (part: JobHandlers, concurrency: number) =>
    startWorker({
      id: `${process.pid}-${randomBytes(4).toString('hex')}`,
      stores: c.resolve(T.Stores),
      uow: c.resolve(T.UnitOfWork),
      clock: c.resolve(T.Clock),
      handlers: part,
      pollMs: config.workerPollMs,
      leaseMs: config.workerLeaseMs,
      concurrency,
      logger: c.resolve(T.Logger),
    });
  const kinds = (keep: (kind: string) => boolean): ReadonlySet<JobKind> => new Set(JOB_KINDS.filter(keep));
  const workers = [
    { serves: kinds((k) => !WEBHOOK_KINDS.has(k)), worker: start(only((k) => !WEBHOOK_KINDS.has(k)), config.workerConcurrency) },
    { serves: kinds((k) => WEBHOOK_KINDS.has(k)), worker: start(only((k) => WEBHOOK_KINDS.has(k)), config.webhookConcurrency) },
  ];
  // Only the worker that serves a new job is woken: every wake is a claim, and one that finds nothing is
  // followed by a query for when work is due.
  const wake = (made: NewJobKinds = 'any') => {
    for (const w of workers) if (concerns(made, w.serves)) w.worker.wake();
  };
  const db = c.resolve(T.Database);
  // A commit that enqueued a job wakes the workers at once (with PostgreSQL, a NOTIFY from any process too);
  // polling stays as the fallback, for jobs due later and for other processes on a SQLite file.
  const stopListening = await db.onNewJobs(wake);
  const purger = startPurger({
    what: 'idempotency records',
    purge: purgeExpiredIdempotencyRecords({ stores: c.resolve(T.Stores), clock: c.resolve(T.Clock) }),
    batch: db.idempotencyPurgeBatch,
    intervalMs: IDEMPOTENCY_PURGE_INTERVAL_MS,
    logger: c.resolve(T.Logger),
  });
  const clientPurger = startPurger({
    what: 'unused OAuth clients',
    purge: purgeUnusedOAuthClients({ stores: c.resolve(T.Stores), clock: c.resolve(T.Clock) }),
    batch: db.oauthClientPurgeBatch,
    intervalMs: OAUTH_CLIENT_PURGE_INTERVAL_MS,
    logger: c.resolve(T.Logger),
  });
  // Content staged for a command that then failed without discarding it, or for one a crash interrupted.
  const stagedPurger = startPurger({
    what: 'staged content',
    purge: purgeStagedContent({ stores: c.resolve(T.Stores), clock: c.resolve(T.Clock) }),
    batch: STAGED_CONTENT_PURGE_BATCH,
    intervalMs: STAGED_CONTENT_PURGE_INTERVAL_MS,
    logger: c.resolve(T.Logger),
  });
  return {
    wake,
    stop: async () => void (await Promise.all([purger.stop(), clientPurger.stop(), stagedPurger.stop(), ...workers.map((w) => w.worker.stop())])),
    stopListening,
  };
};

export interface RunningServer {
  readonly server: Server;
  /** The wired container, for operator tasks beside the running server (and tests). */
  readonly container: DependencyContainer;
  readonly url: string;
  readonly bootstrap: (IssuedKey & { readonly org: Org }) | null;
  /** The in-process workers, or null with ESIG_WORKERS=none. */
  readonly worker: RunningWorker | null;
  close(): Promise<void>;
}

/**
 * Starts the HTTP server. On the embedded SQLite default, a first start with an empty database creates org
 * `default` and prints one test key (shown once, never again).
 */
export const startServer = async (config: ServerConfig, out: (line: string) => void = (l) => process.stdout.write(`${l}\n`)): Promise<RunningServer> => {
  const db = await openDatabase(config);
  const c = buildContainer(config, db);
  const { app, close: closeApp } = c.resolve(T.App);
  let bootstrap: RunningServer['bootstrap'] = null;
  if (config.database.kind === 'sqlite') {
    const count = await c.resolve(T.Stores).apiKeys.count()();
    if (E.isLeft(count)) throw new Error('Could not read the database', { cause: count.left });
    if (count.right === 0) {
      bootstrap = await createKey(c, { orgName: 'default', mode: 'test', scopes: ['*'], name: 'first-start test key' });
      out('');
      out('  esig: first start with an empty database. A test API key for org "default" (shown once):');
      out('');
      out(`    ${bootstrap.secret}`);
      out('');
      out("  Keep it: it is stored only as a hash. Create more with `npx esig keys create --org default --mode test|live --scopes '*'`.");
      out('');
    }
  }
  // Express 5 calls the listen callback on a failed listen too, with the error (the port taken, say): a
  // callback that ignored it reported "listening" for a server that was not.
  let closeServer: () => Promise<void> = async () => undefined;
  const server = await new Promise<Server>((resolve, reject) => {
    const s = app.listen(config.port, config.host, (error?: Error) => (error === undefined ? resolve(s) : reject(error)));
    closeServer = closesGracefully(s);
  }).catch(async (e: unknown) => {
    // Nothing left open that would keep the process alive after it reports the failure.
    await closeApp();
    await c.resolve(T.Mcp).close();
    await c.resolve(T.PdfPool).close();
    await db.close();
    throw e;
  });
  const worker = config.workers === 'in-process' ? await startWorkers(c, config) : null;
  // Keep-alive longer than common load-balancer idle timeouts, so they close first and no request is lost.
  server.keepAliveTimeout = 65_000;
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : config.port;
  // The tool server calls this process's own API over loopback, now that the port is known.
  c.resolve(T.SelfUrl).url = `http://127.0.0.1:${port}`;
  c.resolve(T.Logger).info({ port, publicUrl: config.publicUrl, database: config.database.kind }, 'esig listening');
  // `true` believes any X-Forwarded-For: a client that writes its own escapes the per-address limits.
  if (config.trustProxy === true)
    c.resolve(T.Logger).warn({ setting: 'ESIG_TRUST_PROXY' }, 'ESIG_TRUST_PROXY=true trusts every X-Forwarded-For a client sends; set the number of proxies in front (1) or their addresses instead');
  out(`esig: listening on http://${config.host}:${port} (public URL ${config.publicUrl}, ${config.database.kind} database)`);
  return {
    server,
    container: c,
    url: `http://127.0.0.1:${port}`,
    bootstrap,
    worker,
    close: async () => {
      await closeServer();
      await worker?.stopListening();
      await worker?.stop();
      await closeApp();
      await c.resolve(T.Mcp).close();
      await c.resolve(T.PdfPool).close();
      await db.close();
    },
  };
};

/** `esig worker`: the background workers alone, no HTTP. */
export const runWorkerProcess = async (config: ServerConfig) => {
  const db = await openDatabase(config);
  const c = buildContainer(config, db);
  const worker = await startWorkers(c, config);
  c.resolve(T.Logger).info({ database: config.database.kind }, 'esig worker started');
  return {
    stop: async () => {
      await worker.stopListening();
      await worker.stop();
      await c.resolve(T.PdfPool).close();
      await db.close();
    },
  };
};

export { loadConfig, ConfigError };

/** The environment, read here and nowhere else. */
export const configFromEnvironment = (): ServerConfig => loadConfig(process.env);
