export { createEsigApp } from './app';
export type { EsigHttpDeps, EsigHttpOptions, Logger } from './deps';
export { defaultHttpOptions } from './deps';
export { buildOpenApi } from './openapi';
export { buildRoutes } from './routes';
export { buildSignerRoutes } from './signer-routes';
export * as codecs from './codecs';
export { toProblem, statusOf, PROBLEMS } from './problem';
export type { ProblemCode } from './problem';
