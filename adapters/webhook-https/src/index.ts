export { type AddressCheck, type AllowList, checkAddress, checkAddressWith, compileAllowList } from './address-rules';
export { parseRetryAfter } from './retry-after';
export { BODY_EXCERPT_BYTES, DEFAULT_USER_AGENT, type HttpsWebhookSenderOptions, createHttpsWebhookSender } from './sender';
export { type ParsedTarget, parseTarget } from './target';
