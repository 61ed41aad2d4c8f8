import type { WebhookTransportError } from '@esig/core';

// OpenSSL verification results as Node reports them in `err.code`, plus Node's own TLS and SSL codes.
const TLS_CODE =
  /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|EPROTO$|DEPTH_ZERO_SELF_SIGNED_CERT$|SELF_SIGNED_CERT_IN_CHAIN$|INVALID_CA$|INVALID_PURPOSE$|PATH_LENGTH_EXCEEDED$|HOSTNAME_MISMATCH$)/;

const codeOf = (e: unknown): string | undefined => {
  if (typeof e !== 'object' || e === null) return undefined;
  const code = (e as { code?: unknown }).code;
  if (typeof code === 'string') return code;
  // Trying several addresses (autoSelectFamily) fails with an AggregateError of the attempts.
  if (e instanceof AggregateError) return e.errors.map(codeOf).find((c) => c !== undefined);
  return undefined;
};

export const describeError = (e: unknown): string => {
  const code = codeOf(e);
  const message = e instanceof Error ? e.message : String(e);
  return code === undefined || message.includes(code) ? message : `${code}: ${message}`;
};

/**
 * The kind of a failure raised while connecting or exchanging (resolution failures are classified where
 * they happen, as `dns`). Whatever is not recognisably TLS or a timeout counts as a connection failure.
 */
export const classifyTransportError = (e: unknown): WebhookTransportError => {
  const code = codeOf(e) ?? '';
  if (TLS_CODE.test(code)) return 'tls';
  if (code === 'ETIMEDOUT') return 'timeout';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'dns';
  return 'connect';
};
