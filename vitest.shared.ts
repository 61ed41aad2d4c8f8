import { defaultServerConditions } from 'vite';
import { defineProject } from 'vitest/config';

/**
 * The settings every package's tests share; each package's vitest.config.ts names itself. Tests run on the
 * TypeScript sources: `@esig/*` imports resolve through the `@esig/source` export condition to `src/`, not to
 * the compiled `dist/` that users install.
 */
export const esigProject = (name: string, extra: { testTimeout?: number } = {}) =>
  defineProject({
    resolve: { conditions: ['@esig/source', ...defaultServerConditions] },
    ssr: { resolve: { conditions: ['@esig/source', ...defaultServerConditions], externalConditions: ['@esig/source'] } },
    test: {
      name,
      include: ['test/**/*.test.ts'],
      testTimeout: extra.testTimeout ?? 30_000,
      hookTimeout: 60_000,
    },
  });
