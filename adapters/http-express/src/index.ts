export { createEsigApp } from './app.js';
export type { EsigApp } from './app.js';
export type { EsigHttpDeps, EsigHttpOptions, Logger } from './deps.js';
export { defaultHttpOptions } from './deps.js';
export { buildOpenApi } from './openapi.js';
export { buildRoutes } from './routes.js';
export * as codecs from './codecs.js';
export { toProblem, statusOf } from './problem.js';
