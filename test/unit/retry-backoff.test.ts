import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RELIABILITY } from '../../lib/config/constants.js';
import { backoffCeilingMs, backoffDelayMs, DEFAULT_BACKOFF } from '../../lib/retry/backoff.js';

const randomFraction = fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true });

describe('backoffDelayMs', () => {
  it('stays within 0 and min(cap, base × 2^(n-1)) for every retry and every random draw', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1_000 }), randomFraction, (retry, r) => {
        const delay = backoffDelayMs(retry, () => r);
        const ceiling = Math.min(RELIABILITY.backoffCapMs, RELIABILITY.backoffBaseMs * 2 ** (retry - 1));
        expect(delay).toBeGreaterThanOrEqual(0);
        expect(delay).toBeLessThanOrEqual(ceiling);
        expect(Number.isInteger(delay)).toBe(true);
      }),
    );
  });

  it('never exceeds the 60 s cap, however many retries came before', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }), randomFraction, (retry, r) => {
        expect(backoffDelayMs(retry, () => r)).toBeLessThanOrEqual(RELIABILITY.backoffCapMs);
      }),
    );
  });

  it('uses the whole window: a draw near 1 waits close to the ceiling, a draw of 0 not at all', () => {
    expect(backoffDelayMs(3, () => 0)).toBe(0);
    expect(backoffDelayMs(3, () => 0.999_999)).toBe(3_999);
    expect(backoffDelayMs(20, () => 0.999_999)).toBe(59_999);
  });

  it('clamps a faulty random source instead of producing negative or capless waits', () => {
    expect(backoffDelayMs(2, () => -3)).toBe(0);
    expect(backoffDelayMs(2, () => 7)).toBe(2_000);
    expect(backoffDelayMs(2, () => Number.NaN)).toBe(0);
  });
});

describe('backoffCeilingMs', () => {
  it.each([
    [1, 1_000],
    [2, 2_000],
    [3, 4_000],
    [6, 32_000],
    [7, 60_000],
    [50, 60_000],
  ])('caps retry %i at %i ms', (retry, ceiling) => {
    expect(backoffCeilingMs(retry)).toBe(ceiling);
  });

  it('treats a retry number below 1 as the first retry', () => {
    expect(backoffCeilingMs(0)).toBe(DEFAULT_BACKOFF.baseMs);
    expect(backoffCeilingMs(-4)).toBe(DEFAULT_BACKOFF.baseMs);
  });

  it('follows a custom policy', () => {
    expect(backoffCeilingMs(4, { baseMs: 10, capMs: 50 })).toBe(50);
    expect(backoffCeilingMs(2, { baseMs: 10, capMs: 50 })).toBe(20);
  });
});
