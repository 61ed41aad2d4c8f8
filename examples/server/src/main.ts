import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { join } from 'node:path';
import { container, instanceCachingFactory } from 'tsyringe';
import type { DependencyContainer } from 'tsyringe';
import * as E from 'fp-ts/lib/Either.js';
import * as TE from 'fp-ts/lib/TaskEither.js';
import type { Clock, CursorSigner, GrantedScope, IssuedKey, MailTransport, Mode, Org, Stores, Tenant } from '@esig/core';
import {
  bootstrapKey,
  execute,
  jobHandlers,
  testMailboxTransport,
} from '@esig/core';
import { createEsigApp, defaultHttpOptions } from '@esig/http-express';
import { createSmtpTransport } from '@esig/mailer-smtp';
import { createPdfWorkerPool } from '@esig/pdf-pdflib';
import type { RunningWorker } from '@esig/runtime-node';
import { createAesGcmSecretBox, createUlidGenerator, nodeCrypto, startWorker, systemClock } from '@esig/runtime-node';
import { createHttpsWebhookSender } from '@esig/webhook-https';
import type { ServerConfig } from './config.js';
import { ConfigError, loadConfig } from './config.js';
import type { Database } from './database.js';
import { openDatabase } from './database.js';
import { createJsonLogger } from './logger.js';
import { T } from './tokens.js';

const USER_AGENT = 'esig-webhooks/1.0';

/**
 * The composition root: the only place that reads the environment and wires adapters to the core's ports.
 * Registrations are factories (no decorators), so esbuild-compiled code needs no decorator metadata. The
 * database is opened first (opening PostgreSQL is asynchronous) and registered as a value.
 */
export const buildContainer = (config: ServerConfig, db: Database): DependencyContainer => {
  const c = container.createChildContainer();
  const once = <A>(f: (c: DependencyContainer) => A) => ({ useFactory: instanceCachingFactory(f) });

  c.register(T.Config, { useValue: config });
  c.register(T.Database, { useValue: db });
  c.register(T.Logger, once(() => createJsonLogger(config.logLevel)));
  c.register(T.Clock, { useValue: systemClock });
  c.register(T.Crypto, { useValue: nodeCrypto });
  c.register(T.Ids, once((r) => createUlidGenerator(r.resolve(T.Clock))));
  c.register(T.MasterKey, once(() => loadMasterKey(config)));
  c.register(T.Stores, { useValue: db.stores });
  c.register(T.UnitOfWork, { useValue: db.uow });
  // PDF and image work (upload inspection, sealing, the signing-time preflight) runs on worker threads:
  // it grows with the input, and the event loop must keep answering while it runs.
  c.register(T.PdfPool, once(() => createPdfWorkerPool(config.pdfThreads === null ? {} : { threads: config.pdfThreads })));
  c.register(T.Pdf, once((r) => r.resolve(T.PdfPool).inspector));
  c.register(T.Renderer, once((r) => r.resolve(T.PdfPool).renderer));
  c.register(T.Stamps, once((r) => r.resolve(T.PdfPool).stamps));
  c.register(T.Cursors, once((r) => createCursorSigner(r.resolve(T.MasterKey))));
  c.register(T.SecretBox, once((r) => createAesGcmSecretBox(r.resolve(T.MasterKey))));
  c.register(
    T.WebhookSender,
    once(() =>
      createHttpsWebhookSender({
        allowHosts: config.webhookAllowHosts,
        extraCa: config.webhookCaFile === null ? undefined : readFileSync(config.webhookCaFile),
        userAgent: USER_AGENT,
      }),
    ),
  );
  c.register(T.RateLimiter, once((r) => db.rateLimiter(config.rateLimit.windowS * 1000, r.resolve(T.Clock))));
  c.register(
    T.Mail,
    once((r) => {
      const live = config.smtpUrl ? createSmtpTransport(config.smtpUrl) : null;
      const testSmtp = config.testSmtpUrl ? createSmtpTransport(config.testSmtpUrl) : null;
      const deps = { uow: r.resolve(T.UnitOfWork), clock: r.resolve(T.Clock), ids: r.resolve(T.Ids) };
      // Without ESIG_SMTP_URL live mail cannot leave; the jobs fail softly and retry until it is set.
      const unconfigured: MailTransport = { send: () => TE.left({ _tag: 'MailFailure', permanent: false, detail: 'ESIG_SMTP_URL is not set' }) };
      return (tenant: Tenant): MailTransport => (tenant.mode === 'live' ? (live ?? unconfigured) : (testSmtp ?? testMailboxTransport(deps, tenant)));
    }),
  );
  const core = (r: DependencyContainer) => ({
    stores: r.resolve(T.Stores),
    uow: r.resolve(T.UnitOfWork),
    clock: r.resolve(T.Clock),
    ids: r.resolve(T.Ids),
    crypto: r.resolve(T.Crypto),
    secrets: r.resolve(T.SecretBox),
    sender: r.resolve(T.WebhookSender),
    retryScale: config.webhookRetryScale,
    // Jitter only; not a secret.
    random: Math.random,
  });
  c.register(
    T.JobHandlers,
    once((r) => {
      const deps = core(r);
      return jobHandlers({
        ...deps,
        mail: r.resolve(T.Mail),
        publicUrl: config.publicUrl,
        renderer: r.resolve(T.Renderer),
        reminderIntervalMs: config.reminderIntervalMs,
        webhooks: { secrets: deps.secrets, sender: deps.sender, retryScale: deps.retryScale, random: deps.random },
      });
    }),
  );
  c.register(
    T.HttpDeps,
    once((r) => ({
      ...core(r),
      pdf: r.resolve(T.Pdf),
      stamps: r.resolve(T.Stamps),
      pageLimits: config.pageLimits,
      cursors: r.resolve(T.Cursors),
      rateLimiter: r.resolve(T.RateLimiter),
      logger: r.resolve(T.Logger),
      mail: r.resolve(T.Mail),
      reminderIntervalMs: config.reminderIntervalMs,
      ready: async () => E.isRight(await r.resolve(T.Stores).apiKeys.count()()),
    })),
  );
  c.register(
    T.App,
    once((r) =>
      createEsigApp(r.resolve(T.HttpDeps), {
        ...defaultHttpOptions(config.publicUrl),
        rateLimit: { perKey: config.rateLimit.perKey, perOrg: config.rateLimit.perOrg },
        maxUploadBytes: config.maxUploadBytes,
        bodyTimeoutMs: config.bodyTimeoutMs,
        embedSessionTtlS: config.embedSessionTtlS,
        trustProxy: config.trustProxy,
      }),
    ),
  );
  return c;
};

/** Cursors are signed with a key derived from the master key, so they survive restarts but not tampering. */
const createCursorSigner = (masterKey: Buffer): CursorSigner => {
  const key = nodeCrypto.hmacSha256Hex(masterKey, 'esig:cursor:v1');
  const sign = (data: string) => nodeCrypto.hmacSha256Hex(key, data).slice(0, 32);
  return { sign, verify: (data, mac) => nodeCrypto.timingSafeEqual(sign(data), mac) };
};

/** ESIG_MASTER_KEY, else `<dataDir>/master.key`, generated (mode 0600) on first start. */
const loadMasterKey = (config: ServerConfig): Buffer => {
  if (config.masterKeyHex !== null) return Buffer.from(config.masterKeyHex, 'hex');
  const file = join(config.dataDir, 'master.key');
  if (existsSync(file)) {
    const hex = readFileSync(file, 'utf8').trim();
    if (!/^[0-9a-fA-F]{64}$/.test(hex)) throw new ConfigError(`${file} does not hold 64 hex characters`);
    return Buffer.from(hex, 'hex');
  }
  if (config.database.kind === 'postgres')
    // Several processes must share one key: generating one per machine would make their secrets unreadable to each other.
    throw new ConfigError('ESIG_MASTER_KEY is required with PostgreSQL (64 hex characters, the same for every process).');
  mkdirSync(config.dataDir, { recursive: true });
  const key = randomBytes(32);
  writeFileSync(file, `${key.toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
  return key;
};

/** Starts the background workers of this process: mail, sealing, expiry, reminders, webhooks. */
export const startWorkers = async (c: DependencyContainer, config: ServerConfig): Promise<RunningWorker & { stopListening: () => Promise<void> }> => {
  const worker = startWorker({
    id: `${process.pid}-${randomBytes(4).toString('hex')}`,
    stores: c.resolve(T.Stores),
    uow: c.resolve(T.UnitOfWork),
    clock: c.resolve(T.Clock),
    handlers: c.resolve(T.JobHandlers),
    pollMs: config.workerPollMs,
    leaseMs: config.workerLeaseMs,
    concurrency: config.workerConcurrency,
    logger: c.resolve(T.Logger),
  });
  const db = c.resolve(T.Database);
  // With PostgreSQL, a NOTIFY from any process wakes the worker at once; polling stays as the fallback.
  const stopListening = db.onNewJobs ? await db.onNewJobs(() => worker.wake()) : async () => undefined;
  return { ...worker, stopListening };
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
      out('  Keep it: it is stored only as a hash. Create more with `npx esig keys create`.');
      out('');
    }
  }
  const server = await new Promise<Server>((resolve, reject) => {
    const s = app.listen(config.port, config.host, () => resolve(s));
    s.once('error', reject);
  });
  const worker = config.workers === 'in-process' ? await startWorkers(c, config) : null;
  // Keep-alive longer than common load-balancer idle timeouts, so they close first and no request is lost.
  server.keepAliveTimeout = 65_000;
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : config.port;
  c.resolve(T.Logger).info({ port, publicUrl: config.publicUrl, database: config.database.kind }, 'esig listening');
  out(`esig: listening on http://${config.host}:${port} (public URL ${config.publicUrl}, ${config.database.kind} database)`);
  return {
    server,
    container: c,
    url: `http://127.0.0.1:${port}`,
    bootstrap,
    worker,
    close: async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Idle keep-alive connections would hold close() open for the keep-alive timeout.
        server.closeIdleConnections();
      });
      await worker?.stopListening();
      await worker?.stop();
      await closeApp();
      await c.resolve(T.PdfPool).close();
      await db.close();
    },
  };
};

/** Creates an org (if needed) and a key in it, as the `esig keys create` command does. */
export const createKey = async (
  c: DependencyContainer,
  input: { orgName: string; mode: Mode; scopes: readonly GrantedScope[]; name: string },
): Promise<IssuedKey & { readonly org: Org }> => {
  const deps = { uow: c.resolve(T.UnitOfWork), clock: c.resolve(T.Clock), ids: c.resolve(T.Ids), crypto: c.resolve(T.Crypto) };
  const r = await execute(deps)(bootstrapKey(deps)(input))();
  if (E.isLeft(r)) throw new Error(`Could not create the key: ${r.left._tag}`, { cause: r.left });
  return r.right;
};

/** `esig keys create`: opens the database, creates the key, closes. */
export const createKeyStandalone = async (config: ServerConfig, input: Parameters<typeof createKey>[1]) => {
  const db = await openDatabase(config);
  const c = buildContainer(config, db);
  try {
    return await createKey(c, input);
  } finally {
    await c.resolve(T.PdfPool).close();
    await db.close();
  }
};

/** `esig jobs …`: opens the database, hands its job queue to an operator's command, closes. */
export const withJobStores = async <A>(config: ServerConfig, f: (deps: { readonly stores: Stores; readonly clock: Clock }) => Promise<A>): Promise<A> => {
  const db = await openDatabase(config);
  try {
    return await f({ stores: db.stores, clock: systemClock });
  } finally {
    await db.close();
  }
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

/** Applies pending migrations and reports how many ran. */
export const migrate = async (config: ServerConfig): Promise<number> => {
  const db = await openDatabase(config, false);
  try {
    return await db.migrate();
  } finally {
    await db.close();
  }
};

export { loadConfig, ConfigError };

/** The environment, read here and nowhere else. */
export const configFromEnvironment = (): ServerConfig => loadConfig(process.env);
