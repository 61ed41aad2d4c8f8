export { buildContainer, startServer, startWorkers, runWorkerProcess, createKey, createKeyStandalone, migrate, loadConfig, ConfigError } from './main';
export { openDatabase } from './database';
export type { Database } from './database';
export type { RunningServer } from './main';
export type { ServerConfig } from './config';
export { T } from './tokens';
