import type { PageLimits } from '@esig/core';
import { DEFAULT_PAGE_LIMITS } from '@esig/core';

/** Settings of the reference server. Built only from the environment names of CONTRACT.md. */
export interface ServerConfig {
  readonly port: number;
  readonly host: string;
  readonly publicUrl: string;
  readonly database: { readonly kind: 'sqlite'; readonly path: string } | { readonly kind: 'postgres'; readonly url: string };
  /** Where generated secrets (the master key) live when not given in the environment. */
  readonly dataDir: string;
  /** 64 hex characters, or null to read or generate `<dataDir>/master.key`. */
  readonly masterKeyHex: string | null;
  readonly rateLimit: { readonly perKey: number; readonly perOrg: number; readonly perAddress: number; readonly windowS: number };
  readonly maxUploadBytes: number;
  /** Bytes of uploads held at once; more is answered 503 `server_busy` before the body is read. */
  readonly maxUploadBytesInFlight: number;
  /** What one organization in one mode may hold of `maxUploadBytesInFlight`. */
  readonly maxUploadBytesInFlightPerTenant: number;
  /** How long an upload may wait for a PDF thread before it is answered 503 `server_busy`. */
  readonly maxInspectWaitMs: number;
  /** How long a request body may take to arrive before 408 (ESIG_BODY_TIMEOUT_S). */
  readonly bodyTimeoutMs: number;
  /** Pages per uploaded document and per request (ESIG_MAX_PAGES_PER_DOCUMENT, ESIG_MAX_PAGES_PER_REQUEST). */
  readonly pageLimits: PageLimits;
  /** Worker threads for PDF work (ESIG_PDF_THREADS); null: one less than the cores, at least one. */
  readonly pdfThreads: number | null;
  readonly trustProxy: boolean | number | string;
  readonly logLevel: 'debug' | 'info' | 'warn' | 'error';
  /** Apply pending migrations when a process opens the database (ESIG_AUTO_MIGRATE, default true). */
  readonly autoMigrate: boolean;
  /** Live-mode mail (a nodemailer URL); null: live mail waits in the job queue until configured. */
  readonly smtpUrl: string | null;
  /** Where test-mode mail goes; null: the test mailbox (`GET /api/v1/test-mailbox`). Never a real recipient. */
  readonly testSmtpUrl: string | null;
  /** `in-process` runs the background workers inside `esig serve`; `none` leaves them to `esig worker`. */
  readonly workers: 'in-process' | 'none';
  /** Automatic reminder interval; null disables automatic reminders. */
  readonly reminderIntervalMs: number | null;
  /** How often an idle worker looks for due jobs. */
  readonly workerPollMs: number;
  /** How long a worker holds a claimed job; a crashed worker's jobs return after this. */
  readonly workerLeaseMs: number;
  /** Job loops per process for mail, sealing, expiry and reminders (they overlap network waits). */
  readonly workerConcurrency: number;
  /** Job loops per process for webhook deliveries (ESIG_WEBHOOK_CONCURRENCY). */
  readonly webhookConcurrency: number;
  /** Connections per process to PostgreSQL. */
  readonly databasePoolSize: number;
  /** PostgreSQL: how long a pooled connection may stay idle before it is closed (0: never). */
  readonly databaseIdleTimeoutMs: number;
  /** PostgreSQL: how long one statement may run before the server cancels it. */
  readonly databaseStatementTimeoutMs: number;
  /** Development only: hosts or CIDRs exempt from the webhook private-address rule. */
  readonly webhookAllowHosts: readonly string[];
  /** Extra browser origins allowed to call `/mcp` (ESIG_MCP_ALLOWED_ORIGINS). */
  readonly mcpAllowedOrigins: readonly string[];
  /** Extra CA certificates (PEM file) trusted for webhook HTTPS. */
  readonly webhookCaFile: string | null;
  /** Multiplies webhook retry gaps (tests use a tiny value). */
  readonly webhookRetryScale: number;
  /** Lifetime of an unused embedded signing session, in seconds (ESIG_EMBED_SESSION_TTL_S). */
  readonly embedSessionTtlS: number;
  /**
   * Development: the store refuses a transaction begun inside another's work, which would otherwise hang
   * (ESIG_CHECK_TRANSACTIONS, default false; it costs CPU on every request).
   */
  readonly checkTransactions: boolean;
}

export class ConfigError extends Error {}

type Env = Readonly<Record<string, string | undefined>>;

const int = (env: Env, name: string, dflt: number, min = 1, max?: number): number => {
  const raw = env[name];
  if (raw === undefined || raw === '') return dflt;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || (max !== undefined && n > max))
    throw new ConfigError(`${name} must be an integer ${max === undefined ? `≥ ${min}` : `from ${min} to ${max}`} (got "${raw}")`);
  return n;
};

const bool = (env: Env, name: string, dflt: boolean): boolean => {
  const raw = env[name];
  if (raw === undefined || raw === '') return dflt;
  if (raw === 'true' || raw === 'false') return raw === 'true';
  throw new ConfigError(`${name} must be true or false (got "${raw}")`);
};

/** Reads and checks the configuration; a bad value stops the process with a message naming the variable. */
export const loadConfig = (env: Env): ServerConfig => {
  const port = int(env, 'ESIG_PORT', 3000, 0);
  const dbUrl = env.ESIG_DATABASE_URL || 'sqlite:./data/esig.db';
  let database: ServerConfig['database'];
  if (dbUrl.startsWith('sqlite:')) database = { kind: 'sqlite', path: dbUrl.slice('sqlite:'.length) };
  else if (/^postgres(ql)?:\/\//.test(dbUrl)) database = { kind: 'postgres', url: dbUrl };
  else throw new ConfigError(`ESIG_DATABASE_URL must be sqlite:<path> or postgres://… (got "${dbUrl}")`);
  if (database.kind === 'sqlite' && database.path === '') throw new ConfigError('ESIG_DATABASE_URL: sqlite: needs a path');

  const masterKeyHex = env.ESIG_MASTER_KEY || null;
  if (masterKeyHex !== null && !/^[0-9a-fA-F]{64}$/.test(masterKeyHex))
    throw new ConfigError('ESIG_MASTER_KEY must be 64 hex characters (32 bytes)');

  const trust = env.ESIG_TRUST_PROXY;
  const logLevel = (env.ESIG_LOG_LEVEL || 'info') as ServerConfig['logLevel'];
  if (!['debug', 'info', 'warn', 'error'].includes(logLevel)) throw new ConfigError('ESIG_LOG_LEVEL must be debug, info, warn or error');

  const maxUploadBytes = int(env, 'ESIG_MAX_UPLOAD_BYTES', 25 * 1024 * 1024);
  // At least one upload of the largest size must fit, in all and for one tenant.
  const maxUploadBytesInFlight = int(env, 'ESIG_MAX_UPLOAD_BYTES_IN_FLIGHT', 8 * maxUploadBytes, maxUploadBytes);
  return {
    port,
    host: env.ESIG_HOST || '0.0.0.0',
    publicUrl: (env.ESIG_PUBLIC_URL || `http://localhost:${port}`).replace(/\/+$/, ''),
    database,
    dataDir: env.ESIG_DATA_DIR || (database.kind === 'sqlite' ? dirnameOf(database.path) : './data'),
    masterKeyHex,
    rateLimit: {
      // PostgreSQL counts against limits held as 32-bit integers.
      perKey: int(env, 'ESIG_RATE_LIMIT_KEY', 600, 1, 2_147_483_647),
      // Keyless callers by address; follows the per-key limit unless set.
      perAddress: int(env, 'ESIG_RATE_LIMIT_ADDRESS', int(env, 'ESIG_RATE_LIMIT_KEY', 600, 1, 2_147_483_647), 1, 2_147_483_647),
      perOrg: int(env, 'ESIG_RATE_LIMIT_ORG', 1200, 1, 2_147_483_647),
      windowS: int(env, 'ESIG_RATE_LIMIT_WINDOW_S', 60),
    },
    maxUploadBytes,
    maxUploadBytesInFlight,
    maxUploadBytesInFlightPerTenant: int(
      env,
      'ESIG_MAX_UPLOAD_BYTES_IN_FLIGHT_PER_TENANT',
      Math.max(maxUploadBytes, Math.floor(maxUploadBytesInFlight / 2)),
      maxUploadBytes,
      maxUploadBytesInFlight,
    ),
    maxInspectWaitMs: int(env, 'ESIG_MAX_INSPECT_WAIT_S', 10, 1, 86_400) * 1000,
    bodyTimeoutMs: int(env, 'ESIG_BODY_TIMEOUT_S', 60) * 1000,
    embedSessionTtlS: int(env, 'ESIG_EMBED_SESSION_TTL_S', 300),
    pageLimits: {
      maxPagesPerDocument: int(env, 'ESIG_MAX_PAGES_PER_DOCUMENT', DEFAULT_PAGE_LIMITS.maxPagesPerDocument),
      maxPagesPerRequest: int(env, 'ESIG_MAX_PAGES_PER_REQUEST', DEFAULT_PAGE_LIMITS.maxPagesPerRequest),
    },
    pdfThreads: env.ESIG_PDF_THREADS === undefined || env.ESIG_PDF_THREADS === '' ? null : int(env, 'ESIG_PDF_THREADS', 1),
    trustProxy: trust === undefined || trust === '' ? false : trust === 'true' ? true : /^\d+$/.test(trust) ? Number(trust) : trust,
    logLevel,
    autoMigrate: env.ESIG_AUTO_MIGRATE !== 'false',
    checkTransactions: bool(env, 'ESIG_CHECK_TRANSACTIONS', false),
    smtpUrl: env.ESIG_SMTP_URL || null,
    testSmtpUrl: env.ESIG_TEST_SMTP_URL || null,
    workers: workersOf(env.ESIG_WORKERS),
    reminderIntervalMs: (() => {
      const h = int(env, 'ESIG_REMINDER_INTERVAL_H', 72, 0);
      return h === 0 ? null : h * 3_600_000;
    })(),
    workerPollMs: int(env, 'ESIG_WORKER_POLL_MS', 500, 10),
    workerLeaseMs: int(env, 'ESIG_WORKER_LEASE_MS', 300_000, 100),
    databasePoolSize: int(env, 'ESIG_DATABASE_POOL_SIZE', 10),
    databaseIdleTimeoutMs: int(env, 'ESIG_DATABASE_IDLE_TIMEOUT_MS', 0, 0, 2_147_483_647),
    databaseStatementTimeoutMs: int(env, 'ESIG_DATABASE_STATEMENT_TIMEOUT_MS', 30_000, 1, 2_147_483_647),
    workerConcurrency: int(env, 'ESIG_WORKER_CONCURRENCY', 4),
    webhookConcurrency: int(env, 'ESIG_WEBHOOK_CONCURRENCY', 16),
    webhookAllowHosts: (env.ESIG_WEBHOOK_ALLOW_HOSTS ?? '').split(',').map((h) => h.trim()).filter(Boolean),
    mcpAllowedOrigins: (env.ESIG_MCP_ALLOWED_ORIGINS ?? '').split(',').map((h) => h.trim()).filter(Boolean),
    webhookCaFile: env.ESIG_WEBHOOK_CA_FILE || null,
    webhookRetryScale: (() => {
      const raw = env.ESIG_WEBHOOK_RETRY_SCALE;
      if (raw === undefined || raw === '') return 1;
      const n = Number(raw);
      if (!Number.isFinite(n) || n <= 0) throw new ConfigError(`ESIG_WEBHOOK_RETRY_SCALE must be a positive number (got "${raw}")`);
      return n;
    })(),
  };
};

const workersOf = (v: string | undefined): ServerConfig['workers'] => {
  if (v === undefined || v === '' || v === 'in-process') return 'in-process';
  if (v === 'none') return 'none';
  throw new ConfigError(`ESIG_WORKERS must be in-process or none (got "${v}")`);
};

const dirnameOf = (p: string) => {
  const i = p.lastIndexOf('/');
  return i <= 0 ? (i === 0 ? '/' : '.') : p.slice(0, i);
};
