export { buildContainer, startServer, startWorkers, runWorkerProcess, createKey, migrate, loadConfig, ConfigError } from './main';
export type { RunningServer } from './main';
export type { ServerConfig } from './config';
export { T } from './tokens';
