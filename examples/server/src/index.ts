export { buildContainer } from './container.js';
export { startServer, startWorkers, runWorkerProcess, configFromEnvironment, loadConfig, ConfigError } from './main.js';
export { createKey, createKeyStandalone, migrate, withJobStores } from './operator.js';
export { openDatabase } from './database.js';
export type { Database } from './database.js';
export type { RunningServer } from './main.js';
export type { ServerConfig } from './config.js';
export { T } from './tokens.js';
