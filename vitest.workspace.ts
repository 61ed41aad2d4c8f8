// Vitest 4 no longer reads a workspace file by itself: vitest.config.ts imports this list as
// `test.projects`. One entry per workspace package that has tests.
export default [
  'packages/*',
  'adapters/*',
  'examples/*',
];
