import 'reflect-metadata';
import { readFileSync } from 'node:fs';
import { container, instanceCachingFactory } from 'tsyringe';
import type { DependencyContainer } from 'tsyringe';
import * as E from 'fp-ts/lib/Either.js';
import * as TE from 'fp-ts/lib/TaskEither.js';
import type { CursorSigner, MailTransport, Tenant } from '@esig/core';
import { authenticateAccessToken, createReceiverGate, jobHandlers, testMailboxTransport } from '@esig/core';
import { createEsigApp, defaultHttpOptions } from '@esig/http-express';
import { createSmtpTransport } from '@esig/mailer-smtp';
import { createPdfWorkerPool } from '@esig/pdf-pdflib';
import { createAesGcmSecretBox, createUlidGenerator, nodeCrypto, systemClock } from '@esig/runtime-node';
import { createClientMetadataFetcher, createHttpsWebhookSender } from '@esig/webhook-https';
import { DEFAULT_MCP_MAX_BODY_BYTES, createMcpHandler } from '@esig/mcp';
import type { ServerConfig } from './config.js';
import type { Database } from './database.js';
import { createJsonLogger } from './logger.js';
import { loadMasterKey } from './master-key.js';
import { T } from './tokens.js';

const USER_AGENT = 'esig-webhooks/1.0';

/** The largest `/mcp` body: an upload of the largest size as base64 (4 bytes for every 3), and room for the call. */
const mcpMaxBodyBytes = (maxUploadBytes: number) => Math.max(DEFAULT_MCP_MAX_BODY_BYTES, Math.ceil(maxUploadBytes / 3) * 4 + 1024 * 1024);

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
  c.register(T.PdfPool, once(() => createPdfWorkerPool({ maxInspectWaitMs: config.maxInspectWaitMs, ...(config.pdfThreads === null ? {} : { threads: config.pdfThreads }) })));
  c.register(T.Pdf, once((r) => r.resolve(T.PdfPool).inspector));
  c.register(T.Renderer, once((r) => r.resolve(T.PdfPool).renderer));
  c.register(T.Stamps, once((r) => r.resolve(T.PdfPool).stamps));
  c.register(T.Cursors, once((r) => createCursorSigner(r.resolve(T.MasterKey))));
  c.register(T.SecretBox, once((r) => createAesGcmSecretBox(r.resolve(T.MasterKey))));
  c.register(
    T.WebhookSender,
    once((r) =>
      createHttpsWebhookSender({
        allowHosts: config.webhookAllowHosts,
        extraCa: config.webhookCaFile === null ? undefined : readFileSync(config.webhookCaFile),
        userAgent: USER_AGENT,
        // The causes a client is not shown (the resolver's error, the address a name resolved to).
        log: (fields, msg) => r.resolve(T.Logger).warn(fields, msg),
      }),
    ),
  );
  c.register(T.RateLimiter, once((r) => db.rateLimiter(config.rateLimit.windowS * 1000, r.resolve(T.Clock))));
  c.register(T.KeyAdmission, once((r) => db.keyAdmission(config.rateLimit.windowS * 1000, r.resolve(T.RateLimiter))));
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
        webhooks: {
          secrets: deps.secrets,
          sender: deps.sender,
          retryScale: deps.retryScale,
          random: deps.random,
          // A slow receiver holds at most a quarter of this process's webhook loops; the rest serve other receivers.
          receiverGate: createReceiverGate({ share: Math.max(1, Math.floor(config.webhookConcurrency / 4)) }),
        },
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
      keyAdmission: r.resolve(T.KeyAdmission),
      logger: r.resolve(T.Logger),
      mail: r.resolve(T.Mail),
      reminderIntervalMs: config.reminderIntervalMs,
      ready: async () => E.isRight(await r.resolve(T.Stores).apiKeys.count()()),
      // OAuth clients named by a metadata document URL: fetched under the webhook sender's outbound rules.
      clientMetadata: createClientMetadataFetcher({
        allowHosts: config.webhookAllowHosts,
        extraCa: config.webhookCaFile === null ? undefined : readFileSync(config.webhookCaFile),
        log: (fields, msg) => r.resolve(T.Logger).warn(fields, msg),
      }),
    })),
  );
  c.register(
    T.App,
    once((r) =>
      createEsigApp(r.resolve(T.HttpDeps), {
        ...defaultHttpOptions(config.publicUrl),
        rateLimit: { perKey: config.rateLimit.perKey, perOrg: config.rateLimit.perOrg, perAddress: config.rateLimit.perAddress },
        maxUploadBytes: config.maxUploadBytes,
        maxUploadBytesInFlight: config.maxUploadBytesInFlight,
        maxUploadBytesInFlightPerTenant: config.maxUploadBytesInFlightPerTenant,
        bodyTimeoutMs: config.bodyTimeoutMs,
        embedSessionTtlS: config.embedSessionTtlS,
        trustProxy: config.trustProxy,
        mcpMaxBodyBytes: mcpMaxBodyBytes(config.maxUploadBytes),
        mcp: r.resolve(T.Mcp),
      }),
    ),
  );
  c.register(
    T.Mcp,
    once((r) =>
      createMcpHandler({
        maxBodyBytes: mcpMaxBodyBytes(config.maxUploadBytes),
        publicUrl: config.publicUrl,
        apiBaseUrl: () => r.resolve(T.SelfUrl).url,
        allowedOrigins: config.mcpAllowedOrigins,
        verifyAccessToken: async (token) => {
          const deps = { stores: r.resolve(T.Stores), crypto: r.resolve(T.Crypto), clock: r.resolve(T.Clock) };
          return E.isRight(await authenticateAccessToken(deps)(token)());
        },
      }),
    ),
  );
  c.register(T.SelfUrl, { useValue: { url: `http://127.0.0.1:${config.port}` } });
  return c;
};

/** Cursors are signed with a key derived from the master key, so they survive restarts but not tampering. */
const createCursorSigner = (masterKey: Buffer): CursorSigner => {
  const key = nodeCrypto.hmacSha256Hex(masterKey, 'esig:cursor:v1');
  const sign = (data: string) => nodeCrypto.hmacSha256Hex(key, data).slice(0, 32);
  return { sign, verify: (data, mac) => nodeCrypto.timingSafeEqual(sign(data), mac) };
};

