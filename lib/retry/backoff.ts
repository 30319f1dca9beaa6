import { RELIABILITY } from '../config/constants.js';

/** The two numbers of a full-jitter exponential backoff. */
export interface BackoffPolicy {
  /** The first retry waits up to this long; each further retry doubles the ceiling. */
  readonly baseMs: number;
  /** No retry ever waits longer than this, however many came before it. */
  readonly capMs: number;
}

/** The fixed policy: 1 s base, 60 s cap (below the 90 s silence threshold). */
export const DEFAULT_BACKOFF: BackoffPolicy = {
  baseMs: RELIABILITY.backoffBaseMs,
  capMs: RELIABILITY.backoffCapMs,
};

/**
 * The upper bound of the wait before retry `retry` (1 for the first retry): `min(cap, base × 2^(retry-1))`.
 *
 * A retry number below 1 (or not an integer) is treated as the first retry, so a caller's
 * off-by-one can never produce a zero ceiling or a fractional exponent.
 */
export function backoffCeilingMs(retry: number, policy: BackoffPolicy = DEFAULT_BACKOFF): number {
  const n = Number.isInteger(retry) && retry >= 1 ? retry : 1;
  // 2 ** large n is Infinity, which min() turns into the cap: no overflow handling needed.
  return Math.min(policy.capMs, policy.baseMs * 2 ** (n - 1));
}

/**
 * Full-jitter backoff: a uniformly random wait in `[0, ceiling]` before retry `retry`.
 *
 * Full jitter (rather than "ceiling ± some jitter") spreads the retries of many workers hit by
 * the same outage across the whole window, so they do not come back in lockstep.
 *
 * @param random - a number in [0, 1), injected so tests are deterministic; out-of-range or NaN
 *   values are clamped so a faulty source of randomness cannot produce a negative or capless wait.
 * @example
 * backoffDelayMs(3, () => 0.5); // 2_000: half of min(60 s, 1 s × 2²)
 */
export function backoffDelayMs(
  retry: number,
  random: () => number,
  policy: BackoffPolicy = DEFAULT_BACKOFF,
): number {
  const ceiling = backoffCeilingMs(retry, policy);
  const r = random();
  const fraction = Number.isFinite(r) ? Math.min(1, Math.max(0, r)) : 0;
  return Math.floor(fraction * ceiling);
}
