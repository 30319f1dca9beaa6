import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The chaos suite has its own config and command (npm run test:chaos).
    exclude: ['test/chaos/**', 'node_modules/**'],
    globalSetup: ['test/support/global-setup.ts'],
    pool: 'forks',
    testTimeout: 180_000,
    hookTimeout: 60_000,
    reporters: ['default'],
    // The SDK warns that releases after January 2027 need Node 22; the lockfile pins ours.
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
  },
});
