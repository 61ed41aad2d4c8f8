export * from './store-contract';
export * from './memory-stores';
export * from './fakes';
export * from './pdf-fakes';
