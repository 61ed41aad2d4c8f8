export { type AddressCheck, type AllowList, checkAddress, checkAddressWith, compileAllowList } from './address-rules.js';
export { parseRetryAfter } from './retry-after.js';
export { BODY_EXCERPT_BYTES, DEFAULT_USER_AGENT, type HttpsWebhookSenderOptions, createHttpsWebhookSender } from './sender.js';
export { type ParsedTarget, parseTarget } from './target.js';
export { type ClientMetadataFetcherOptions, createClientMetadataFetcher } from './metadata-fetcher.js';
