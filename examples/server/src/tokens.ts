import type { InjectionToken } from 'tsyringe';
import type { Clock, Crypto, CursorSigner, DocumentRenderer, IdGenerator, JobHandlers, KeyAdmission, MailTransport, PdfInspector, RateLimiter, SecretBox, StampPreflight, Stores, Tenant, UnitOfWork, WebhookSender } from '@esig/core';
import type { PdfWorkerPool } from '@esig/pdf-pdflib';
import type { McpHandler } from '@esig/mcp';
import type { Database } from './database.js';
import type { EsigApp, EsigHttpDeps, Logger } from '@esig/http-express';
import type { ServerConfig } from './config.js';

/** The injection tokens of the composition root: one per port, plus the assembled pieces. */
export const T = {
  Config: Symbol('Config') as InjectionToken<ServerConfig>,
  Logger: Symbol('Logger') as InjectionToken<Logger>,
  Clock: Symbol('Clock') as InjectionToken<Clock>,
  Ids: Symbol('IdGenerator') as InjectionToken<IdGenerator>,
  Crypto: Symbol('Crypto') as InjectionToken<Crypto>,
  MasterKey: Symbol('MasterKey') as InjectionToken<Buffer>,
  Database: Symbol('Database') as InjectionToken<Database>,
  SecretBox: Symbol('SecretBox') as InjectionToken<SecretBox>,
  WebhookSender: Symbol('WebhookSender') as InjectionToken<WebhookSender>,
  Stores: Symbol('Stores') as InjectionToken<Stores>,
  UnitOfWork: Symbol('UnitOfWork') as InjectionToken<UnitOfWork>,
  PdfPool: Symbol('PdfWorkerPool') as InjectionToken<PdfWorkerPool>,
  Pdf: Symbol('PdfInspector') as InjectionToken<PdfInspector>,
  Stamps: Symbol('StampPreflight') as InjectionToken<StampPreflight>,
  Cursors: Symbol('CursorSigner') as InjectionToken<CursorSigner>,
  RateLimiter: Symbol('RateLimiter') as InjectionToken<RateLimiter>,
  KeyAdmission: Symbol('KeyAdmission') as InjectionToken<KeyAdmission>,
  Renderer: Symbol('DocumentRenderer') as InjectionToken<DocumentRenderer>,
  Mail: Symbol('MailRouter') as InjectionToken<(tenant: Tenant) => MailTransport>,
  JobHandlers: Symbol('JobHandlers') as InjectionToken<JobHandlers>,
  HttpDeps: Symbol('EsigHttpDeps') as InjectionToken<EsigHttpDeps>,
  App: Symbol('App') as InjectionToken<EsigApp>,
  /** The tool server at `/mcp`, with the worker threads it answers on. */
  Mcp: Symbol('McpHandler') as InjectionToken<McpHandler>,
  /** Where this process's own API listens (set once listening): the tool server calls the API there. */
  SelfUrl: Symbol('SelfUrl') as InjectionToken<{ url: string }>,
} as const;
