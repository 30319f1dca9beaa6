import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readBudget } from '../../lib/budget/headers.js';
import {
  type BudgetPolicy,
  type BudgetState,
  EMPTY_BUDGET,
  observe,
  RESET_SKEW_MS,
  type Slot,
  slotOf,
  type TakeResult,
  take,
} from '../../lib/budget/pacing.js';

const T0 = Date.parse('2026-12-01T00:00:00Z');
const policy: BudgetPolicy = { maxConcurrent: 0, leaseMs: 45_000 };

/** A budget the source described: `remaining` of `limit` left until `resetAt`, window `windowMs`. */
function known(limit: number, remaining: number, resetAt: number, windowMs: number): BudgetState {
  return {
    ...EMPTY_BUDGET,
    limit,
    remaining,
    resetAt,
    windowMs,
    windowConfirmed: true,
    resetFromSource: true,
    sourceResetAt: resetAt,
  };
}

function expectKind<K extends TakeResult['kind']>(
  result: TakeResult,
  kind: K,
): Extract<TakeResult, { kind: K }> {
  expect(result.kind).toBe(kind);
  return result as Extract<TakeResult, { kind: K }>;
}

describe('take', () => {
  it('lets a request go at once while nothing is known about the budget', () => {
    const result = expectKind(take(EMPTY_BUDGET, T0, policy, 'a'), 'go');
    expect(result.state.remaining).toBeNull();
    expect(Object.keys(result.state.leases)).toEqual(['a']);
  });

  it('spends what the window has left, then reserves slots of the next window in order', () => {
    let state = known(4, 2, T0 + 10_000, 10_000);
    const results: TakeResult[] = [];
    for (const id of ['a', 'b', 'c', 'd', 'e']) {
      const result = take(state, T0, policy, id);
      results.push(result);
      state = result.state;
    }
    expect(results.map((r) => r.kind)).toEqual(['go', 'go', 'reserved', 'reserved', 'reserved']);
    const slots = results.slice(2).map((r) => (r as { slot: Slot }).slot);
    // First come, first served, spread over the next window once it opened (after the skew margin).
    expect(slots.map((s) => s.at)).toEqual([
      T0 + 10_000 + RESET_SKEW_MS,
      T0 + 10_000 + RESET_SKEW_MS + 2_250,
      T0 + 10_000 + RESET_SKEW_MS + 4_500,
    ]);
    expect(slots.every((s) => s.until === T0 + 20_000)).toBe(true);
    expect(state.ahead).toBe(3);
  });

  it('places reservations beyond one window into the windows after it', () => {
    expect(slotOf(4, T0, 4, 10_000)).toEqual({ at: T0 + 10_000 + RESET_SKEW_MS, until: T0 + 20_000 });
    expect(slotOf(5, T0, 4, 10_000)).toEqual({ at: T0 + 10_000 + RESET_SKEW_MS + 2_250, until: T0 + 20_000 });
  });

  it('honours a reservation in its window without spending the window again, and voids it after', () => {
    const state = known(4, 0, T0 + 10_000, 10_000);
    const reserved = expectKind(take(state, T0, policy, 'a'), 'reserved');
    const inTime = expectKind(take(reserved.state, reserved.slot.at, policy, 'a', reserved.slot), 'go');
    // The window opened with its reserved request already counted: 3 of 4 left for everyone else.
    expect(inTime.state.remaining).toBe(3);
    const late = take(reserved.state, reserved.slot.until + RESET_SKEW_MS, policy, 'a', reserved.slot);
    expect(late.kind).toBe('go');
    expect(late.state.remaining).toBe(3); // a void reservation spends like any request
  });

  it('forfeits what a window left from a skew margin before its reset until the next one opens', () => {
    const state = known(4, 3, T0 + 10_000, 10_000);
    // A request sent this close to the reset could land in the next window uncounted.
    for (const at of [T0 + 9_000, T0 + 10_200]) {
      expect(expectKind(take(state, at, policy, 'a'), 'reserved').slot.at).toBe(T0 + 10_000 + RESET_SKEW_MS);
    }
    expect(take(state, T0 + 8_999, policy, 'a').kind).toBe('go');
  });

  it('starts a configured budget with the first request and spends it like an announced one', () => {
    const configured: BudgetPolicy = { ...policy, configured: { limit: 2, windowMs: 60_000 } };
    const a = expectKind(take(EMPTY_BUDGET, T0, configured, 'a'), 'go');
    const b = expectKind(take(a.state, T0, configured, 'b'), 'go');
    const c = expectKind(take(b.state, T0, configured, 'c'), 'reserved');
    expect(c.slot.at).toBe(T0 + 60_000 + RESET_SKEW_MS);
  });

  it('waits out a pause the source asked for', () => {
    const state = { ...EMPTY_BUDGET, pausedUntil: T0 + 30_000 };
    expect(expectKind(take(state, T0, policy, 'a'), 'wait').until).toBe(T0 + 30_000);
    expect(take(state, T0 + 30_000, policy, 'a').kind).toBe('go');
  });

  it('caps requests in flight and frees a slot on release or when its lease expires', () => {
    const capped: BudgetPolicy = { maxConcurrent: 2, leaseMs: 45_000 };
    const a = expectKind(take(EMPTY_BUDGET, T0, capped, 'a'), 'go');
    const b = expectKind(take(a.state, T0, capped, 'b'), 'go');
    const busy = expectKind(take(b.state, T0, capped, 'c'), 'busy');
    expect(busy.retryAt).toBe(T0 + 45_000);
    const released = observe(b.state, T0 + 10, capped, 'a', {});
    expect(take(released, T0 + 10, capped, 'c').kind).toBe('go');
    // Nobody released `b`'s holder: it crashed. Its lease lapses and frees the slot.
    expect(take(b.state, T0 + 45_000, capped, 'c').kind).toBe('go');
    expect(take(b.state, T0 + 44_999, capped, 'c').kind).toBe('busy');
  });

  it('does not spend the window on a request that found every concurrency slot taken', () => {
    const capped: BudgetPolicy = { maxConcurrent: 1, leaseMs: 45_000 };
    const first = expectKind(take(known(10, 5, T0 + 60_000, 60_000), T0, capped, 'a'), 'go');
    const busy = expectKind(take(first.state, T0, capped, 'b'), 'busy');
    expect(busy.state.remaining).toBe(4);
  });
});

describe('observe', () => {
  it('learns the budget from the first response, minus the requests still in flight', () => {
    let state = EMPTY_BUDGET;
    for (const id of ['a', 'b', 'c']) state = take(state, T0, policy, id).state;
    const next = observe(state, T0 + 100, policy, 'a', { limit: 10, remaining: 9, resetAt: T0 + 60_000 });
    expect(next).toMatchObject({ limit: 10, remaining: 7, resetAt: T0 + 60_000 });
    expect(Object.keys(next.leases).sort()).toEqual(['b', 'c']);
  });

  it('only lowers what is left within a window: a late response never raises it', () => {
    const state = known(10, 3, T0 + 60_000, 60_000);
    expect(observe(state, T0, policy, null, { remaining: 1, resetAt: T0 + 60_000 }).remaining).toBe(1);
    expect(observe(state, T0, policy, null, { remaining: 8, resetAt: T0 + 60_000 }).remaining).toBe(3);
  });

  it('moves to a newer window and fills it with the requests reserved into it', () => {
    const state = { ...known(10, 0, T0 + 60_000, 60_000), ahead: 4 };
    const next = observe(state, T0 + 61_000, policy, null, { remaining: 9, resetAt: T0 + 120_000 });
    expect(next).toMatchObject({ resetAt: T0 + 120_000, remaining: 5, ahead: 0 });
  });

  it('ignores an older window, unless it says the budget is spent', () => {
    const state = known(10, 6, T0 + 120_000, 60_000);
    expect(observe(state, T0, policy, null, { remaining: 2, resetAt: T0 + 60_000 })).toEqual(state);
    const spent = observe(state, T0, policy, null, { remaining: 0, resetAt: T0 + 60_000 });
    expect(spent.pausedUntil).toBe(T0 + 60_000);
  });

  it('takes a window to be at least as long as the longest time-to-reset it has shown', () => {
    const first = observe(EMPTY_BUDGET, T0, policy, null, { remaining: 5, resetAt: T0 + 40_000 });
    expect(first.windowMs).toBe(40_000);
    const later = observe(first, T0 + 30_000, policy, null, { remaining: 4, resetAt: T0 + 40_000 });
    expect(later.windowMs).toBe(40_000);
  });

  it('pauses on Retry-After', () => {
    expect(observe(EMPTY_BUDGET, T0, policy, null, { pauseUntil: T0 + 5_000 }).pausedUntil).toBe(T0 + 5_000);
  });
});

describe('readBudget', () => {
  it.each([
    [
      'GitHub headers',
      200,
      { 'x-ratelimit-limit': '5000', 'x-ratelimit-remaining': '4999', 'x-ratelimit-reset': '1764547200' },
      { limit: 5000, remaining: 4999, resetAt: 1_764_547_200_000 },
      false,
    ],
    [
      "Okta's and X's headers",
      429,
      { 'x-rate-limit-limit': '600', 'x-rate-limit-remaining': '0', 'x-rate-limit-reset': '1764547200' },
      { limit: 600, remaining: 0, resetAt: 1_764_547_200_000 },
      true,
    ],
    [
      'GitLab headers (epoch reset)',
      200,
      { 'ratelimit-limit': '2000', 'ratelimit-remaining': '10', 'ratelimit-reset': '1764547200' },
      { limit: 2000, remaining: 10, resetAt: 1_764_547_200_000 },
      false,
    ],
    [
      'draft headers (delta reset)',
      200,
      { 'ratelimit-limit': '100', 'ratelimit-remaining': '0', 'ratelimit-reset': '30' },
      { limit: 100, remaining: 0, resetAt: T0 + 30_000 },
      false,
    ],
    [
      "GitHub's exhausted window",
      403,
      { 'x-ratelimit-limit': '5000', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '1764547200' },
      { limit: 5000, remaining: 0, resetAt: 1_764_547_200_000 },
      true,
    ],
    ['a 429 with Retry-After', 429, { 'retry-after': '7' }, { pauseUntil: T0 + 7_000 }, true],
    ['a 403 that is not a rate limit', 403, {}, {}, false],
    ['garbage', 200, { 'x-ratelimit-remaining': 'lots', 'x-ratelimit-reset': 'soon' }, {}, false],
  ])('reads %s', (_name, status, headers, observation, rejected) => {
    expect(readBudget(status, headers, T0)).toEqual({ observation, rejected });
  });
});

/**
 * A fixed-window source (`limit` per `windowMs`, windows aligned at `T0`; a request past the limit
 * is refused and not counted) and clients asking at random times with random latencies: every
 * request is eventually served, and refusals stay rare — at most one probe for each window the
 * budget rolled into without learning its end, never a burst.
 */
describe('pacing against a fixed-window source', () => {
  it('serves every request and is refused at most once per window', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 2_000, max: 20_000 }),
        fc.array(fc.integer({ min: 0, max: 3_000 }), { minLength: 1, maxLength: 60 }),
        fc.array(fc.integer({ min: 0, max: 400 }), { minLength: 1, maxLength: 60 }),
        fc.integer({ min: 0, max: 4 }),
        (limit, windowMs, gaps, latencies, cap) => {
          const capped: BudgetPolicy = { maxConcurrent: cap, leaseMs: 45_000 };
          const served = simulate(limit, windowMs, gaps, latencies, capped);
          expect(served.total).toBe(gaps.length);
          for (const [window, refused] of served.refusedPerWindow) {
            if (window > served.firstKnownWindow) expect(refused).toBeLessThanOrEqual(1);
          }
        },
      ),
      { numRuns: 1000 },
    );
  });
});

type Event =
  | { at: number; kind: 'ask'; id: string; slot?: Slot }
  | { at: number; kind: 'answer'; id: string; window: number; refused: boolean };

function simulate(
  limit: number,
  windowMs: number,
  gaps: number[],
  latencies: number[],
  budgetPolicy: BudgetPolicy,
): { total: number; refusedPerWindow: Map<number, number>; firstKnownWindow: number } {
  let state = EMPTY_BUDGET;
  const perWindow = new Map<number, number>();
  const refusedPerWindow = new Map<number, number>();
  let firstKnownWindow = Number.POSITIVE_INFINITY;
  const events: Event[] = [];
  let at = T0;
  gaps.forEach((gap, i) => {
    at += gap;
    events.push({ at, kind: 'ask', id: `r${i}` });
  });
  let total = 0;
  let sequence = 0;
  // Bounded: a budget that never lets a waiting request go again fails here instead of hanging.
  for (let guard = 0; events.length > 0; guard++) {
    if (guard > 20_000) throw new Error('the budget stopped letting requests go');
    events.sort((a, b) => a.at - b.at);
    const event = events.shift()!;
    const now = event.at;
    if (event.kind === 'answer') {
      const count = perWindow.get(event.window) ?? 0;
      const resetAt = T0 + (event.window + 1) * windowMs;
      // The source answers with its own count; responses arrive in any order.
      state = observe(state, now, budgetPolicy, event.id, {
        limit,
        remaining: Math.max(0, limit - count),
        resetAt,
      });
      firstKnownWindow = Math.min(firstKnownWindow, Math.floor((now - T0) / windowMs));
      // A refused request asks again, as the retry loop would.
      if (event.refused) events.push({ at: now, kind: 'ask', id: `${event.id}'` });
      continue;
    }
    const result = take(state, now, budgetPolicy, event.id, event.slot);
    state = result.state;
    if (result.kind === 'go') {
      const latency = latencies[sequence++ % latencies.length]!;
      const arrives = now + Math.floor(latency / 2);
      const window = Math.floor((arrives - T0) / windowMs);
      const count = perWindow.get(window) ?? 0;
      const refused = count >= limit;
      if (refused) refusedPerWindow.set(window, (refusedPerWindow.get(window) ?? 0) + 1);
      else {
        perWindow.set(window, count + 1);
        total += 1;
      }
      events.push({ at: now + latency, kind: 'answer', id: event.id, window, refused });
    } else if (result.kind === 'reserved') {
      events.push({ at: result.slot.at, kind: 'ask', id: event.id, slot: result.slot });
    } else if (result.kind === 'wait') {
      events.push({ at: result.until, kind: 'ask', id: event.id });
    } else {
      events.push({ at: Math.max(now + 1, Math.min(result.retryAt, now + 50)), kind: 'ask', id: event.id });
    }
  }
  return { total, refusedPerWindow, firstKnownWindow };
}
