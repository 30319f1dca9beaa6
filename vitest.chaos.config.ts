import { defineConfig } from 'vitest/config';

/**
 * The chaos suite (`npm run test:chaos`): seeded randomized trials, one file, run on its own.
 * Its files end in `.chaos.ts`, so the default config (`test/**\/*.test.ts`) never picks them up.
 */
export default defineConfig({
  test: {
    include: ['test/chaos/**/*.chaos.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    pool: 'forks',
    testTimeout: 180_000,
    hookTimeout: 120_000,
    reporters: ['default'],
  },
});
