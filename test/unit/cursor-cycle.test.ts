import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type CycleWatch, watchCursor } from '../../lib/run/cursor-cycle.js';

/** Walks a chain whose i-th next cursor is `next(i)`; returns the page whose commit closed a cycle, or null. */
function walk(next: (i: number) => string | null, pages: number): number | null {
  let watch: CycleWatch | undefined;
  let sent: string | null = null;
  for (let page = 1; page <= pages; page++) {
    const following = next(page);
    const step = watchCursor(watch, sent, following);
    if (step.cycle) return page;
    if (following === null) return null;
    watch = step.watch;
    sent = following;
  }
  return null;
}

describe('the cursor-cycle watch', () => {
  it('never fires on a stream that does not repeat a cursor', () => {
    expect(walk((i) => `token-${i}`, 5_000)).toBeNull();
  });

  it('finds a cycle of any length λ entered after μ pages within 2·max(μ + 1, λ) + λ + 1 pages', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 200 }), fc.integer({ min: 1, max: 200 }), (mu, lambda) => {
        // Cursor of page i: distinct up to mu + lambda, then the cycle's.
        const cursor = (i: number) => `c${i < mu + lambda ? i : mu + ((i - mu) % lambda)}`;
        const found = walk(cursor, 10 * (mu + lambda) + 10);
        expect(found).not.toBeNull();
        // The mark moves at powers of two: it sits inside the cycle with room for λ steps by the
        // first power of two past both μ and λ, and the cycle closes within λ pages of that.
        expect(found!).toBeLessThanOrEqual(2 * Math.max(mu + 1, lambda) + lambda + 1);
      }),
    );
  });

  it('keeps constant state and forgets the watch when the stream ends', () => {
    const step = watchCursor({ mark: 'm', power: 1024, steps: 3 }, 'a', null);
    expect(step).toEqual({ cycle: false, watch: undefined });
    const long = watchCursor(undefined, null, 'x'.repeat(100_000));
    expect(long.cycle).toBe(false);
    if (!long.cycle) expect(JSON.stringify(long.watch).length).toBeLessThan(80);
  });
});
