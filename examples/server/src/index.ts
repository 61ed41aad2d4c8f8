export { buildContainer, startServer, startWorkers, runWorkerProcess, createKey, createKeyStandalone, migrate, loadConfig, ConfigError } from './main.js';
export { openDatabase } from './database.js';
export type { Database } from './database.js';
export type { RunningServer } from './main.js';
export type { ServerConfig } from './config.js';
export { T } from './tokens.js';
