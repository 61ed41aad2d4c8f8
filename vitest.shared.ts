import { defineProject } from 'vitest/config';

/** The settings every package's tests share; each package's vitest.config.ts names itself. */
export const esigProject = (name: string, extra: { testTimeout?: number } = {}) =>
  defineProject({
    test: {
      name,
      include: ['test/**/*.test.ts'],
      testTimeout: extra.testTimeout ?? 30_000,
      hookTimeout: 60_000,
    },
  });
