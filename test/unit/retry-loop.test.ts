import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { RELIABILITY } from '../../lib/config/constants.js';
import { classifyDefault } from '../../lib/retry/classify.js';
import { type Classification, SourceHttpError } from '../../lib/retry/errors.js';
import { retryWithBackoff } from '../../lib/retry/loop.js';
import type { RetryDeps } from '../../lib/retry/outcome.js';

const NOW = 1_700_000_000_000;

/** A clock that only moves when the loop sleeps, and a sleep that records instead of waiting. */
function fakeDeps(random = 0.5): RetryDeps & { slept: number[] } {
  let now = NOW;
  const slept: number[] = [];
  return {
    slept,
    now: () => now,
    random: () => random,
    sleep: vi.fn(async (ms: number) => {
      slept.push(ms);
      now += ms;
    }),
  };
}

const transient: Classification = { errorClass: 'transient', reason: 'HTTP 503' };
const permanent: Classification = { errorClass: 'permanent', reason: 'HTTP 404' };

/** An operation that fails `failures` times, then answers `value`. */
function flaky<T>(failures: number, value: T) {
  return vi.fn(async (attempt: number) => {
    if (attempt <= failures) throw new Error(`failure ${attempt}`);
    return value;
  });
}

describe('retryWithBackoff', () => {
  it('returns the value of a first-time success without sleeping', async () => {
    const deps = fakeDeps();
    const outcome = await retryWithBackoff(
      async () => 'page',
      () => transient,
      deps,
    );
    expect(outcome).toEqual({ kind: 'ok', value: 'page', attempts: 1 });
    expect(deps.slept).toEqual([]);
  });

  it('dead-letters a permanent error at once, without a retry', async () => {
    const deps = fakeDeps();
    const op = flaky(10, 'never');
    const outcome = await retryWithBackoff(op, () => permanent, deps);
    expect(outcome).toMatchObject({
      kind: 'dead_letter',
      errorClass: 'permanent',
      reason: 'HTTP 404',
      attempts: 1,
    });
    expect(op).toHaveBeenCalledTimes(1);
    expect(deps.slept).toEqual([]);
  });

  it('retries transient errors with backoff until the operation succeeds', async () => {
    const deps = fakeDeps(0.5);
    const outcome = await retryWithBackoff(flaky(2, 'page'), () => transient, deps);
    expect(outcome).toEqual({ kind: 'ok', value: 'page', attempts: 3 });
    expect(deps.slept).toEqual([500, 1_000]);
  });

  it('dead-letters with class transient and the last reason after five attempts', async () => {
    const deps = fakeDeps();
    const op = flaky(Number.POSITIVE_INFINITY, 'never');
    let calls = 0;
    const outcome = await retryWithBackoff(
      op,
      () => ({ errorClass: 'transient', reason: `try ${++calls}` }),
      deps,
    );
    expect(outcome).toMatchObject({
      kind: 'dead_letter',
      errorClass: 'transient',
      reason: 'try 5',
      attempts: 5,
    });
    expect(op).toHaveBeenCalledTimes(RELIABILITY.attemptsPerRequest);
    expect(deps.slept).toHaveLength(4);
  });

  it('defers a Retry-After of 300 s through the queue instead of sleeping', async () => {
    const deps = fakeDeps();
    const error = new SourceHttpError(429, { 'retry-after': '300' }, '', 'https://api.example.com/x');
    const outcome = await retryWithBackoff(
      async () => {
        throw error;
      },
      (e) => classifyDefault(e, deps.now()),
      deps,
    );
    expect(outcome).toEqual({
      kind: 'defer',
      untilMs: NOW + 300_000,
      reason: 'HTTP 429 (rate limited) from https://api.example.com/x',
      attempts: 1,
    });
    expect(deps.slept).toEqual([]);
  });

  it('sleeps a source-requested wait that fits inline instead of the backoff', async () => {
    const deps = fakeDeps();
    await retryWithBackoff(flaky(1, 'page'), () => ({ ...transient, waitMs: 45_000 }), deps);
    expect(deps.slept).toEqual([45_000]);
  });

  it('never sleeps longer than 60 s, whatever the classifier asks', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.option(fc.integer({ min: -1_000, max: 10_000_000 }), { nil: undefined }), {
          minLength: 1,
          maxLength: 6,
        }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        async (waits, random) => {
          const deps = fakeDeps(random);
          let i = 0;
          const classify = (): Classification => ({ ...transient, waitMs: waits[i++ % waits.length] });
          const outcome = await retryWithBackoff(flaky(Number.POSITIVE_INFINITY, 0), classify, deps);
          expect(Math.max(0, ...deps.slept)).toBeLessThanOrEqual(RELIABILITY.maxInlineWaitMs);
          expect(['defer', 'dead_letter']).toContain(outcome.kind);
        },
      ),
    );
  });

  it('reports each retry before sleeping', async () => {
    const onRetry = vi.fn();
    await retryWithBackoff(flaky(1, 'page'), () => transient, fakeDeps(0), { onRetry });
    expect(onRetry).toHaveBeenCalledWith({ attempt: 1, waitMs: 0, classification: transient });
  });

  it('honours a smaller attempt budget and inline cap', async () => {
    const deps = fakeDeps();
    const exhausted = await retryWithBackoff(flaky(5, 'x'), () => transient, deps, { attempts: 2 });
    expect(exhausted).toMatchObject({ kind: 'dead_letter', attempts: 2 });
    const deferred = await retryWithBackoff(flaky(5, 'x'), () => ({ ...transient, waitMs: 2_000 }), deps, {
      maxInlineWaitMs: 1_000,
    });
    expect(deferred).toMatchObject({ kind: 'defer', attempts: 1 });
  });

  it('turns a classifier that throws into a permanent dead letter instead of throwing', async () => {
    const outcome = await retryWithBackoff(
      flaky(1, 'x'),
      () => {
        throw new Error('classifier bug');
      },
      fakeDeps(),
    );
    expect(outcome).toMatchObject({ kind: 'dead_letter', errorClass: 'permanent', attempts: 1 });
    expect(outcome.kind === 'dead_letter' && outcome.reason).toContain('classifier bug');
  });

  it('keeps the original error on a dead letter for logging', async () => {
    const error = new Error('gone');
    const outcome = await retryWithBackoff(
      async () => {
        throw error;
      },
      () => permanent,
      fakeDeps(),
    );
    expect(outcome.kind === 'dead_letter' && outcome.error).toBe(error);
  });

  it('defers a long wait asked on the fifth attempt instead of dead-lettering the page', async () => {
    const deps = fakeDeps();
    let call = 0;
    // Four quick failures, then the source says "come back in an hour".
    const classify = (): Classification => (++call < 5 ? transient : { ...transient, waitMs: 3_600_000 });
    const outcome = await retryWithBackoff(flaky(10, 'never'), classify, deps);
    expect(outcome).toMatchObject({
      kind: 'defer',
      attempts: 5,
      untilMs: NOW + deps.slept.reduce((a, b) => a + b, 0) + 3_600_000,
    });
  });

  it('still dead-letters a short transient error on the fifth attempt', async () => {
    const outcome = await retryWithBackoff(
      flaky(10, 'never'),
      () => ({ ...transient, waitMs: 30_000 }),
      fakeDeps(),
    );
    expect(outcome).toMatchObject({ kind: 'dead_letter', attempts: 5 });
  });

  it('waits at least the backoff ceiling when the source names a reset that is already past', async () => {
    const deps = fakeDeps();
    const outcome = await retryWithBackoff(
      flaky(10, 'never'),
      () => ({ ...transient, waitMs: -5_000 }),
      deps,
    );
    expect(outcome).toMatchObject({ kind: 'dead_letter', attempts: 5 });
    expect(deps.slept).toEqual([1_000, 2_000, 4_000, 8_000]);
  });

  it('counts attempts spent by earlier deliveries against the budget', async () => {
    const deps = fakeDeps();
    const op = flaky(10, 'never');
    const outcome = await retryWithBackoff(op, () => transient, deps, { attemptsUsed: 3 });
    expect(outcome).toMatchObject({ kind: 'dead_letter', attempts: 5 });
    expect(op.mock.calls.map(([attempt]) => attempt)).toEqual([4, 5]);
  });
});
