import { defaultServerConditions } from 'vite';
import { defineProject } from 'vitest/config';

/**
 * The settings every package's tests share; each package's vitest.config.ts names itself. Tests run the
 * packages' TypeScript sources: the `@esig/source` export condition (a package's `src/index.ts`) comes first.
 */
export const esigProject = (name: string, extra: { testTimeout?: number } = {}) =>
  defineProject({
    ssr: { resolve: { conditions: ['@esig/source', ...defaultServerConditions] } },
    test: {
      name,
      include: ['test/**/*.test.ts'],
      testTimeout: extra.testTimeout ?? 30_000,
      hookTimeout: 60_000,
    },
  });
