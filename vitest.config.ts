import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The chaos suite has its own config and command (npm run test:chaos).
    exclude: ['test/chaos/**', 'node_modules/**'],
    globalSetup: ['test/support/global-setup.ts'],
    pool: 'forks',
    // Each worker imports the engine, the AWS SDK and zod once and runs its files one after another,
    // instead of a fresh module graph per file: on 2 cores the suite took 1,012 s isolated (238 s of
    // it importing) and 517 s shared. The price is that a test must not leave module state behind
    // (none mocks modules; the few that set process.env restore it), so a file that starts to
    // depend on order fails where it runs, not only in CI. `--isolate` brings isolation back.
    isolate: false,
    // One worker per core, each with its own emulator (test/support/global-setup.ts). vitest's
    // default leaves a core free, which on a 2-core machine means one worker: the files run one
    // after another while half the machine waits. TEST_WORKERS overrides.
    maxWorkers: Number(process.env.TEST_WORKERS ?? Math.max(2, availableParallelism())),
    testTimeout: 180_000,
    hookTimeout: 60_000,
    reporters: ['default'],
    // The SDK warns that releases after January 2027 need Node 22; the lockfile pins ours.
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
  },
});
