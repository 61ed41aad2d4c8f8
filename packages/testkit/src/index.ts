export * from './store-contract.js';
export * from './memory-stores.js';
export * from './fakes.js';
export * from './pdf-fakes.js';
