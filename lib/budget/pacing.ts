/**
 * The rate budget of one credential, as pure arithmetic (no clock, no storage): what one request
 * may take from it, and what a response teaches it. `lib/store/rate-budgets.ts` keeps the state in
 * DynamoDB and applies these functions under a conditional write.
 *
 * The model is the one rate-limited APIs publish: a window of `limit` requests that ends at
 * `resetAt` (GitHub's `X-RateLimit-*`, GitLab's `RateLimit-*`), followed by the next window.
 *
 * - While the current window has requests left (or nothing is known yet), a request goes at once:
 *   a run that fits the budget is never slowed down.
 * - When it is spent, each further request reserves a slot in a later window, in the order they
 *   asked (first come, first served across every source and partition sharing the credential),
 *   spread evenly over that window (`window / limit` apart), so a backlog never wakes at once.
 * - Every request in flight holds a lease; at most `maxConcurrent` leases exist at a time (the
 *   secondary limit on concurrency). A lease expires, so a crashed worker cannot keep one.
 */

import { grantable, grantLease } from './grants.js';

/** One request in flight (or a grant of several, sent one after another: lib/budget/grants.ts). */
export interface Lease {
  readonly grantedAt: number;
  readonly expiresAt: number;
}

/** The budget of one credential. Times are epoch ms. */
export interface BudgetState {
  /** Requests per window, as the source last said (or as configured). Null: not known yet. */
  readonly limit: number | null;
  /**
   * Length of a window. Until confirmed, a lower bound: the longest time-to-reset a response has
   * shown. Confirmed: the shortest distance seen between two resets the source announced.
   */
  readonly windowMs: number | null;
  readonly windowConfirmed: boolean;
  /** Requests left in the current window, our own count and the source's, whichever is lower. Null: unknown. */
  readonly remaining: number | null;
  /** When the current window ends. Null: unknown. */
  readonly resetAt: number | null;
  /** Whether `resetAt` is the source's word (true) or our prediction from the window length (false). */
  readonly resetFromSource: boolean;
  /** The latest reset the source announced (to measure the window length by). */
  readonly sourceResetAt: number | null;
  /** Requests already promised to windows after the current one (they hold reservations). */
  readonly ahead: number;
  /** The source asked for a pause (`Retry-After`, or an exhausted window it announced): nothing goes before. */
  readonly pausedUntil: number;
  /** Requests in flight by lease id. */
  readonly leases: Readonly<Record<string, Lease>>;
}

/** How a budget is run: the stack's cap and the source's declared or configured limits. */
export interface BudgetPolicy {
  /** Requests in flight at once per credential; 0: no cap. */
  readonly maxConcurrent: number;
  /** A lease not released within this long is considered abandoned (its holder crashed). */
  readonly leaseMs: number;
  /** A budget configured for the source, used until (and unless) the source's own headers say otherwise. */
  readonly configured?: { readonly limit: number; readonly windowMs: number } | undefined;
}

/** Where a reservation stands: it is good from `at` until its window ends at `until`. */
export interface Slot {
  readonly at: number;
  readonly until: number;
}

/** What one request got. */
export type TakeResult =
  /** Go now; the lease must be released when the response (or error) is in. */
  | {
      readonly kind: 'go';
      readonly state: BudgetState;
      readonly leaseId: string;
      /** Requests given, this one included: more than 1 is a grant (lib/budget/grants.ts). */
      readonly tokens: number;
      readonly lease: Lease;
    }
  /** A slot in a later window is reserved: come back at `slot.at` and present it. */
  | { readonly kind: 'reserved'; readonly state: BudgetState; readonly slot: Slot }
  /** Nothing can be promised before `until` (a pause, or a window of unknown length): ask again then. */
  | { readonly kind: 'wait'; readonly state: BudgetState; readonly until: number }
  /** Every concurrency lease is taken; one frees up by `retryAt` at the latest. */
  | { readonly kind: 'busy'; readonly state: BudgetState; readonly retryAt: number };

/** What a response said about the budget. */
export interface Observation {
  readonly limit?: number | undefined;
  readonly remaining?: number | undefined;
  /** The source's reset time (epoch ms). */
  readonly resetAt?: number | undefined;
  /** The source asked not to send anything before this (epoch ms). */
  readonly pauseUntil?: number | undefined;
}

/** A budget nothing is known about: requests go optimistically until a response tells. */
export const EMPTY_BUDGET: BudgetState = {
  limit: null,
  windowMs: null,
  windowConfirmed: false,
  remaining: null,
  resetAt: null,
  resetFromSource: false,
  sourceResetAt: null,
  ahead: 0,
  pausedUntil: 0,
  leases: {},
};

/** Clock-skew margin after a reset, see {@link skewOf}. */
export const RESET_SKEW_MS = 1_000;

/** Reset headers have one-second precision: resets this close are the same window. */
const SAME_WINDOW_TOLERANCE_MS = 1_500;

function limitOf(state: BudgetState, policy: BudgetPolicy): number | null {
  return state.limit ?? policy.configured?.limit ?? null;
}

function windowOf(state: BudgetState, policy: BudgetPolicy): number | null {
  return policy.configured?.windowMs ?? state.windowMs;
}

/** A window length good enough to predict windows beyond the next one. */
function windowKnown(state: BudgetState, policy: BudgetPolicy): boolean {
  return policy.configured !== undefined || state.windowConfirmed;
}

/** How long a request that cannot be promised a slot waits before it asks again (a response will have told more). */
const UNKNOWN_WAIT_MS = 1_000;

function liveLeases(leases: Readonly<Record<string, Lease>>, now: number): Record<string, Lease> {
  const live: Record<string, Lease> = {};
  for (const [id, lease] of Object.entries(leases)) if (lease.expiresAt > now) live[id] = lease;
  return live;
}

/**
 * The margin after a window's reset before its requests go: our clock and the source's may
 * disagree a little, and a request that lands a moment before its window opens is rejected. At
 * most a tenth of the window.
 */
export function skewOf(windowMs: number | null): number {
  return windowMs === null ? RESET_SKEW_MS : Math.min(RESET_SKEW_MS, Math.floor(windowMs / 10));
}

/**
 * Moves the state to the window that contains `now` (a window opens {@link skewOf} after the
 * previous one's reset). Each window that began fills first with the requests reserved into it;
 * requests still in flight from before its start may land in it too, so they count against it.
 * While the window length is only a lower bound, the end of the new window is left unknown (the
 * next response tells it); a window of unknown length makes the state unknown again (optimistic).
 */
export function rollOver(state: BudgetState, now: number, policy: BudgetPolicy): BudgetState {
  const windowMs = windowOf(state, policy);
  if (state.resetAt === null || now < state.resetAt + skewOf(windowMs)) return state;
  const limit = limitOf(state, policy);
  if (limit === null || windowMs === null || windowMs <= 0) {
    return { ...state, remaining: null, resetAt: null, ahead: 0 };
  }
  const skew = skewOf(windowMs);
  const boundary = state.resetAt;
  let { ahead } = state;
  let resetAt = boundary;
  let remaining = limit;
  while (now >= resetAt + skew) {
    const fill = Math.min(ahead, limit);
    ahead -= fill;
    remaining = limit - fill;
    resetAt += windowMs;
    if (ahead === 0 && now >= resetAt + skew) {
      // Idle windows: jump over them at once.
      resetAt += Math.ceil((now - resetAt - skew + 1) / windowMs) * windowMs;
      remaining = limit;
    }
  }
  const straddling = Object.values(state.leases).filter((l) => l.grantedAt < boundary).length;
  remaining = Math.max(0, remaining - straddling);
  if (!windowKnown(state, policy)) {
    return { ...state, ahead, resetAt: null, resetFromSource: false, remaining };
  }
  return { ...state, ahead, resetAt, resetFromSource: false, remaining };
}

/**
 * One request asks the budget. `reservation`: the slot this request reserved earlier; it was
 * counted when it was reserved, so only a concurrency lease is taken. A reservation past its
 * window is void and the request asks like any other. `want`: how many requests the asker would
 * take at once; more than one only when the budget is plentiful (see {@link grantable}).
 */
export function take(
  previous: BudgetState,
  now: number,
  policy: BudgetPolicy,
  leaseId: string,
  reservation?: Slot,
  want = 1,
): TakeResult {
  const leases = liveLeases(previous.leases, now);
  let state = rollOver({ ...previous, leases }, now, policy);
  const live = Object.keys(leases).length;
  const busy = policy.maxConcurrent > 0 && live >= policy.maxConcurrent;
  const go = (next: BudgetState, tokens = 1): TakeResult => {
    if (busy)
      return { kind: 'busy', state, retryAt: Math.min(...Object.values(leases).map((l) => l.expiresAt)) };
    const lease = grantLease(tokens, now, policy);
    return {
      kind: 'go',
      state: { ...next, leases: { ...leases, [leaseId]: lease } },
      leaseId,
      tokens,
      lease,
    };
  };

  if (state.pausedUntil > now) return { kind: 'wait', state, until: state.pausedUntil };
  if (reservation && now < reservation.until) return go(state);
  if (state.remaining === null && policy.configured) {
    // A configured budget with nothing heard from the source: its first window starts now.
    state = { ...state, remaining: policy.configured.limit, resetAt: now + policy.configured.windowMs };
  }
  const closesAt = state.resetAt === null ? null : state.resetAt - skewOf(windowOf(state, policy));
  const tokens = grantable(state, live, now, policy, want, closesAt);
  if (state.remaining === null) return go(state, tokens);
  // Close to a reset (a skew margin either side), what the old window left is forfeit: a request
  // sent now could land in the new window uncounted, after its lease was already released.
  const closing = closesAt !== null && now >= closesAt;
  if (state.remaining > 0 && !closing) {
    const given = Math.min(tokens, state.remaining);
    return go({ ...state, remaining: state.remaining - given }, given);
  }

  // The window is spent: reserve the next free slot of a later window, first come first served.
  const limit = limitOf(state, policy);
  const windowMs = windowOf(state, policy);
  if (state.resetAt === null) {
    // A window rolled into without learning its end, and spent. Once it may be over (its start,
    // the last reset the source announced, plus the shortest length it can have), one request a
    // second goes to ask the source; until then, wait.
    const since = state.sourceResetAt;
    if (since !== null && windowMs !== null && now >= since + windowMs + skewOf(windowMs)) {
      return go({ ...state, pausedUntil: now + UNKNOWN_WAIT_MS });
    }
    return { kind: 'wait', state, until: now + UNKNOWN_WAIT_MS };
  }
  const resetAt = state.resetAt;
  if (limit === null || limit <= 0 || windowMs === null || windowMs <= 0) {
    return { kind: 'wait', state, until: resetAt + skewOf(windowMs) };
  }
  // Only the next window is certain to start at `resetAt`; later ones wait for its length to be known.
  if (state.ahead >= limit && !windowKnown(state, policy)) {
    return { kind: 'wait', state, until: resetAt + skewOf(windowMs) };
  }
  const slot = slotOf(state.ahead, resetAt, limit, windowMs);
  return { kind: 'reserved', state: { ...state, ahead: state.ahead + 1 }, slot };
}

/**
 * The `n`-th reserved request (0-based) after the window ending at `resetAt`: window `n / limit`
 * after it, at position `n mod limit`, spread evenly over the window once it opened.
 */
export function slotOf(n: number, resetAt: number, limit: number, windowMs: number): Slot {
  const skew = skewOf(windowMs);
  const start = resetAt + Math.floor(n / limit) * windowMs;
  const at = start + skew + Math.floor(((n % limit) * (windowMs - skew)) / limit);
  return { at, until: start + windowMs };
}

/**
 * What a reset teaches about the window length: a lower bound (no window is shorter than the
 * time-to-reset it shows) until two resets were seen; then the distance between them, the
 * shortest such distance standing (idle stretches span several windows).
 */
function learnWindow(
  state: BudgetState,
  reset: number,
  now: number,
): Pick<BudgetState, 'windowMs' | 'windowConfirmed'> {
  const lowerBound = Math.max(state.windowMs ?? 0, reset - now);
  const previous = state.sourceResetAt;
  if (previous === null || reset <= previous + SAME_WINDOW_TOLERANCE_MS) {
    return state.windowConfirmed
      ? { windowMs: state.windowMs, windowConfirmed: true }
      : { windowMs: lowerBound, windowConfirmed: false };
  }
  const distance = reset - previous;
  if (!state.windowConfirmed) return { windowMs: Math.max(distance, lowerBound), windowConfirmed: true };
  return { windowMs: Math.min(state.windowMs ?? distance, distance), windowConfirmed: true };
}

/**
 * A response came back (or the request failed): its lease is released and what it said is
 * learned. A newer window replaces the current one; the same window can only lower what is left
 * (monotonic: an older or a duplicate response never raises it); a window announced as spent is
 * honoured even when it contradicts what we thought.
 */
export function observe(
  previous: BudgetState,
  now: number,
  _policy: BudgetPolicy,
  leaseId: string | null,
  seen: Observation,
): BudgetState {
  const leases = liveLeases(previous.leases, now);
  if (leaseId !== null) delete leases[leaseId];
  let state: BudgetState = { ...previous, leases };
  if (seen.limit !== undefined && seen.limit > 0) state = { ...state, limit: seen.limit };
  if (seen.pauseUntil !== undefined && seen.pauseUntil > state.pausedUntil) {
    state = { ...state, pausedUntil: seen.pauseUntil };
  }
  if (seen.remaining === undefined || seen.resetAt === undefined) return state;
  const reset = seen.resetAt;
  if (reset <= now) return state;
  state = {
    ...state,
    ...learnWindow(state, reset, now),
    sourceResetAt: Math.max(state.sourceResetAt ?? 0, reset),
  };
  if (state.resetAt === null && state.remaining !== null) {
    // The window we rolled into without knowing its end: this is its end. Its reserved requests
    // are already counted in our `remaining`, not yet in the source's.
    const remaining = Math.min(state.remaining, seen.remaining);
    return { ...state, resetAt: reset, resetFromSource: true, remaining };
  }
  if (state.resetAt === null || reset > state.resetAt + SAME_WINDOW_TOLERANCE_MS) {
    // A newer window. Requests still in flight may not have been counted in `remaining` yet.
    let remaining = Math.max(0, seen.remaining - Object.keys(leases).length);
    const fill = Math.min(state.ahead, remaining);
    remaining -= fill;
    return { ...state, resetAt: reset, resetFromSource: true, remaining, ahead: state.ahead - fill };
  }
  if (Math.abs(reset - state.resetAt) <= SAME_WINDOW_TOLERANCE_MS || !state.resetFromSource) {
    // The same window (or one we predicted wrongly): re-anchored on the source's reset, so windows
    // we predict never drift from its own; what is left can only go down.
    const remaining = Math.min(state.remaining ?? Number.POSITIVE_INFINITY, seen.remaining);
    const resetAt = state.resetFromSource ? Math.max(state.resetAt, reset) : reset;
    return { ...state, remaining, resetAt, resetFromSource: true };
  }
  // An older window than the source announced before (a late response): only a spent window is
  // believed, as a pause until its reset.
  if (seen.remaining <= 0 && reset > state.pausedUntil) return { ...state, pausedUntil: reset };
  return state;
}
