import { describe, expect, it } from 'vitest';
import { fakeRestConfig, fastRetry, putSource, useEngineWithFakes } from '../support/harness.js';

/*
 * Throttling is waited out, not treated as breakage: a 429 whose only hint is `X-Rate-Limit-Reset`
 * (Okta's and X's epoch seconds) makes the run wait for the reset and go on, as `Retry-After` does.
 * The window outlasts the retry loop's backoff, so a run that ignored the header would fail.
 */

// Real sleeps: the waits are what is tested. The window (20 s) outlasts the whole backoff of the
// retry loop (five attempts, full jitter, at most 1 + 2 + 4 + 8 s), so only a wait for the reset passes.
const setup = useEngineWithFakes('ratereset', { heartbeatIntervalMs: 500, retry: fastRetry(1) });

describe('a 429 that names its reset only in X-Rate-Limit-Reset', () => {
  it('makes the run wait until the reset and succeed', async () => {
    const fake = await setup.startFake({
      entities: 25,
      seed: 31,
      latencyMs: 0,
      profile: {
        invalidRecords: 0,
        githubRateLimitEvery: 2,
        rateLimitWindowSeconds: 20,
        maxConsecutiveFailures: 1_000,
      },
      traits: { rateLimitReset: 'x-rate-limit-reset' },
    });
    await putSource(setup.engine.deps, 'reset-1', 'rest-json', fakeRestConfig(fake.url, { pageSize: 20 }));

    const run = await setup.runToEnd('reset-1', 'full');

    expect(fake.stats().byStatus['429']).toBeGreaterThan(0);
    expect(run.state).toBe('succeeded');
    expect(run.errorCount).toBe(0);
    expect(run.progress.processed).toBe(25);
  }, 120_000);
});
