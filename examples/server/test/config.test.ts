import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/index.js';

describe('PDF limits and the PDF thread pool in the configuration', () => {
  it('defaults to 500 pages per document, 1,000 per request, and the pool’s own thread count', () => {
    const c = loadConfig({});
    expect(c.pageLimits).toEqual({ maxPagesPerDocument: 500, maxPagesPerRequest: 1000 });
    expect(c.pdfThreads).toBeNull();
  });

  it('reads ESIG_MAX_PAGES_PER_DOCUMENT, ESIG_MAX_PAGES_PER_REQUEST and ESIG_PDF_THREADS', () => {
    const c = loadConfig({ ESIG_MAX_PAGES_PER_DOCUMENT: '50', ESIG_MAX_PAGES_PER_REQUEST: '80', ESIG_PDF_THREADS: '3' });
    expect(c.pageLimits).toEqual({ maxPagesPerDocument: 50, maxPagesPerRequest: 80 });
    expect(c.pdfThreads).toBe(3);
  });

  it.each(['ESIG_MAX_PAGES_PER_DOCUMENT', 'ESIG_MAX_PAGES_PER_REQUEST', 'ESIG_PDF_THREADS'])('refuses a %s that is not a positive integer, naming it', (name) => {
    for (const bad of ['0', '-1', '2.5', 'many']) {
      expect(() => loadConfig({ [name]: bad })).toThrow(ConfigError);
      expect(() => loadConfig({ [name]: bad })).toThrow(name);
    }
  });
});

describe('ESIG_CHECK_TRANSACTIONS', () => {
  it('is off unless set to true, and refuses anything but true or false, naming it', () => {
    expect(loadConfig({}).checkTransactions).toBe(false);
    expect(loadConfig({ ESIG_CHECK_TRANSACTIONS: 'true' }).checkTransactions).toBe(true);
    expect(loadConfig({ ESIG_CHECK_TRANSACTIONS: 'false' }).checkTransactions).toBe(false);
    for (const bad of ['1', 'yes', 'TRUE']) expect(() => loadConfig({ ESIG_CHECK_TRANSACTIONS: bad })).toThrow(/ESIG_CHECK_TRANSACTIONS/);
  });
});

describe('ESIG_WEBHOOK_CONCURRENCY', () => {
  it('is 16 webhook job loops by default, beside 4 for the other jobs, and refuses what is not a positive integer', () => {
    expect(loadConfig({})).toMatchObject({ webhookConcurrency: 16, workerConcurrency: 4 });
    expect(loadConfig({ ESIG_WEBHOOK_CONCURRENCY: '2' }).webhookConcurrency).toBe(2);
    for (const bad of ['0', '-1', '2.5', 'many']) expect(() => loadConfig({ ESIG_WEBHOOK_CONCURRENCY: bad })).toThrow(/ESIG_WEBHOOK_CONCURRENCY/);
  });
});

describe('ESIG_DATABASE_STATEMENT_TIMEOUT_MS', () => {
  it('is 30 s by default, and refuses what PostgreSQL could not take as a limit, naming it', () => {
    expect(loadConfig({}).databaseStatementTimeoutMs).toBe(30_000);
    expect(loadConfig({ ESIG_DATABASE_STATEMENT_TIMEOUT_MS: '250' }).databaseStatementTimeoutMs).toBe(250);
    // 0 would be "no limit" to PostgreSQL; above 2^31 - 1 ms it refuses the setting.
    for (const bad of ['0', '-1', '2.5', 'many', '2147483648'])
      expect(() => loadConfig({ ESIG_DATABASE_STATEMENT_TIMEOUT_MS: bad })).toThrow(/ESIG_DATABASE_STATEMENT_TIMEOUT_MS/);
  });
});

describe('ESIG_DATABASE_IDLE_TIMEOUT_MS', () => {
  it('keeps idle connections by default (0), and refuses what a timer could not hold, naming it', () => {
    expect(loadConfig({}).databaseIdleTimeoutMs).toBe(0);
    expect(loadConfig({ ESIG_DATABASE_IDLE_TIMEOUT_MS: '60000' }).databaseIdleTimeoutMs).toBe(60_000);
    for (const bad of ['-1', '2.5', 'never', '2147483648'])
      expect(() => loadConfig({ ESIG_DATABASE_IDLE_TIMEOUT_MS: bad })).toThrow(/ESIG_DATABASE_IDLE_TIMEOUT_MS/);
  });
});

describe('ESIG_RATE_LIMIT_KEY and ESIG_RATE_LIMIT_ORG', () => {
  it('are 600 and 1,200 by default, and refuse a limit PostgreSQL could not count against (a 32-bit integer), naming it', () => {
    expect(loadConfig({}).rateLimit).toMatchObject({ perKey: 600, perOrg: 1200, perAddress: 600 });
    // Keyless callers follow the per-key limit unless their own is set.
    expect(loadConfig({ ESIG_RATE_LIMIT_KEY: '50' }).rateLimit.perAddress).toBe(50);
    expect(loadConfig({ ESIG_RATE_LIMIT_KEY: '50', ESIG_RATE_LIMIT_ADDRESS: '7' }).rateLimit).toMatchObject({ perKey: 50, perAddress: 7 });
    expect(loadConfig({ ESIG_RATE_LIMIT_KEY: '2147483647' }).rateLimit.perKey).toBe(2_147_483_647);
    for (const name of ['ESIG_RATE_LIMIT_KEY', 'ESIG_RATE_LIMIT_ORG', 'ESIG_RATE_LIMIT_ADDRESS'])
      for (const bad of ['0', '-1', '2.5', 'many', '2147483648']) expect(() => loadConfig({ [name]: bad })).toThrow(new RegExp(name));
  });
});
