// A consumer outside the repository, type-checked by `npm run verify:packages` with strict + NodeNext
// against the packed packages: every public entry point a team uses must resolve with its types.
import * as E from 'fp-ts/lib/Either.js';
import type { Command, DomainError, Principal, SignatureRequest, Stores, UnitOfWork } from '@esig/core';
import { createSignatureRequest, describeError, execute, issueSigningLink, overridePorts, sendSignatureRequest } from '@esig/core';
import { createEsigApp, defaultHttpOptions } from '@esig/http-express';
import { createSmtpTransport } from '@esig/mailer-smtp';
import { createPdfWorkerPool } from '@esig/pdf-pdflib';
import { createMemoryRateLimiter } from '@esig/ratelimit-memory';
import { createAesGcmSecretBox, createUlidGenerator, nodeCrypto, startWorker, systemClock } from '@esig/runtime-node';
import { openPostgresStore } from '@esig/store-postgres';
import { openSqliteStore } from '@esig/store-sqlite';
import { describeStoreContract, createMemoryStores } from '@esig/testkit';
import { createHttpsWebhookSender } from '@esig/webhook-https';
import { verifySignature } from '@esig/webhooks';
import { loadConfig } from '@esig/server';

const me: Principal = { tenant: { orgId: 'org_acme', mode: 'test' }, scopes: ['*'], credential: { kind: 'external', id: 'user_1' } };

export const draftAndSend = async (deps: { readonly stores: Stores; readonly uow: UnitOfWork }): Promise<string> => {
  const clock = systemClock;
  const full = { ...deps, clock, ids: createUlidGenerator(clock), crypto: nodeCrypto, pageLimits: { maxPagesPerDocument: 10, maxPagesPerRequest: 20 } };
  const create: Command<SignatureRequest> = createSignatureRequest(full)(me, { title: 'NDA', documentIds: [] });
  const r = await execute(full)(create)();
  if (E.isLeft(r)) return describeError(r.left);
  const sent = await execute(full)(sendSignatureRequest(full)(me, r.right.id))();
  const link = await execute(full)(issueSigningLink(full)(me, r.right.id, 'rcp_1'))();
  return E.isRight(sent) && E.isRight(link) ? link.right.token : describeError((E.isLeft(sent) ? sent.left : (link as E.Left<DomainError>).left));
};

export const wiring = {
  sqlite: () => openSqliteStore({ path: ':memory:' }),
  postgres: () => openPostgresStore({ url: 'postgres://localhost/esig' }),
  joined: () => overridePorts(createMemoryStores(), { documentContents: (s) => s.documentContents }),
  pdf: () => createPdfWorkerPool({ threads: 1 }),
  limiter: () => createMemoryRateLimiter(systemClock, 60_000),
  box: () => createAesGcmSecretBox(new Uint8Array(32)),
  mail: () => createSmtpTransport('smtp://127.0.0.1:2525'),
  sender: () => createHttpsWebhookSender({}),
  http: createEsigApp,
  httpOptions: defaultHttpOptions('https://sign.example.com'),
  worker: startWorker,
  verify: verifySignature,
  config: () => loadConfig({}),
  contract: describeStoreContract,
};
