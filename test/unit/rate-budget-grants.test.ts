import { describe, expect, it } from 'vitest';
import { GRANT, returnGrant } from '../../lib/budget/grants.js';
import {
  type BudgetPolicy,
  type BudgetState,
  EMPTY_BUDGET,
  type TakeResult,
  take,
} from '../../lib/budget/pacing.js';

const T0 = Date.parse('2026-12-01T00:00:00Z');
const capped = (maxConcurrent: number): BudgetPolicy => ({ maxConcurrent, leaseMs: 45_000 });

/** A window the source described: `remaining` of `limit` left until `resetAt`. */
function known(limit: number, remaining: number, resetAt: number): BudgetState {
  return {
    ...EMPTY_BUDGET,
    limit,
    remaining,
    resetAt,
    windowMs: 3_600_000,
    windowConfirmed: true,
    resetFromSource: true,
    sourceResetAt: resetAt,
  };
}

function go(result: TakeResult): Extract<TakeResult, { kind: 'go' }> {
  expect(result.kind).toBe('go');
  return result as Extract<TakeResult, { kind: 'go' }>;
}

/** `n` live single-request leases. */
function withLeases(state: BudgetState, n: number): BudgetState {
  const leases = Object.fromEntries(
    Array.from({ length: n }, (_, i) => [`other-${i}`, { grantedAt: T0, expiresAt: T0 + 45_000 }]),
  );
  return { ...state, leases };
}

describe('a grant of several requests', () => {
  it('is given from a plentiful window, counted at once, under a short lease', () => {
    const granted = go(take(known(5_000, 4_000, T0 + 600_000), T0, capped(10), 'a', undefined, GRANT.tokens));

    expect(granted.tokens).toBe(GRANT.tokens);
    expect(granted.state.remaining).toBe(4_000 - GRANT.tokens);
    expect(granted.lease).toEqual({ grantedAt: T0, expiresAt: T0 + GRANT.lifeMs + GRANT.tailMs });
  });

  it('is one request under a single lease when only one is asked for', () => {
    const single = go(take(known(5_000, 4_000, T0 + 600_000), T0, capped(10), 'a'));

    expect(single.tokens).toBe(1);
    expect(single.state.remaining).toBe(3_999);
    expect(single.lease.expiresAt).toBe(T0 + 45_000);
  });

  it.each([
    ['a small concurrency cap', known(5_000, 4_000, T0 + 600_000), capped(GRANT.minCap - 1), 0],
    ['leases filling more than a quarter of the cap', known(5_000, 4_000, T0 + 600_000), capped(8), 2],
    ['a window nearly spent', known(5_000, GRANT.minRemaining - 1, T0 + 600_000), capped(10), 0],
    ['a window that closes within the grant’s life', known(5_000, 4_000, T0 + GRANT.lifeMs), capped(10), 0],
  ])('is not given with %s: one request, the others keep their share', (_, state, policy, leases) => {
    const single = go(take(withLeases(state, leases), T0, policy, 'a', undefined, GRANT.tokens));

    expect(single.tokens).toBe(1);
    expect(single.lease.expiresAt).toBe(T0 + 45_000);
  });

  it('takes at most a tenth of what the window has left', () => {
    const granted = go(take(known(5_000, 45, T0 + 600_000), T0, capped(0), 'a', undefined, GRANT.tokens));

    expect(granted.tokens).toBe(Math.floor(45 / GRANT.remainingShare));
  });

  it('gives its unsent requests back to the window they were counted in, and frees its slot', () => {
    const granted = go(take(known(5_000, 4_000, T0 + 600_000), T0, capped(10), 'g', undefined, GRANT.tokens));

    const back = returnGrant(granted.state, { leaseId: 'g', unused: 2, windowResetAt: T0 + 600_000 }, 5_000);

    expect(back.remaining).toBe(4_000 - GRANT.tokens + 2);
    expect(back.leases).toEqual({});
  });

  it('gives nothing back to a later window: its requests were counted in the one that ended', () => {
    const later = known(5_000, 5_000, T0 + 4_200_000);
    const withGrant = { ...later, leases: { g: { grantedAt: T0, expiresAt: T0 + 8_000 } } };

    const back = returnGrant(withGrant, { leaseId: 'g', unused: 3, windowResetAt: T0 + 600_000 }, 5_000);

    expect(back.remaining).toBe(5_000);
    expect(back.leases).toEqual({});
  });
});
