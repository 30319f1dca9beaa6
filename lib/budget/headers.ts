import { EPOCH_RESET_PREFIXES, type HeaderRecord, parseRetryAfter } from '../retry/retry-after.js';
import type { Observation } from './pacing.js';

/**
 * What a response's headers say about the rate budget: GitHub's `X-RateLimit-Limit/Remaining/
 * Reset` and Okta's and X's `X-Rate-Limit-*` (reset in epoch seconds), GitLab's and the IETF draft's `RateLimit-*` (reset in epoch
 * seconds or delta seconds), and `Retry-After` on a refusal. Pure; header names lower-cased.
 */

// Above this a reset value is an epoch time, below it a delta (1e9 s of delta would be 31 years).
const EPOCH_SECONDS_THRESHOLD = 1e9;
const INTEGER = /^\d+$/;

function count(value: string | undefined): number | undefined {
  const trimmed = value?.trim();
  return trimmed !== undefined && INTEGER.test(trimmed) ? Number(trimmed) : undefined;
}

function resetTime(value: string | undefined, now: number): number | undefined {
  const seconds = count(value);
  if (seconds === undefined) return undefined;
  return seconds > EPOCH_SECONDS_THRESHOLD ? seconds * 1_000 : now + seconds * 1_000;
}

/** What one response says about the budget, and whether it was a refusal for want of budget. */
export interface BudgetReading {
  readonly observation: Observation;
  /** A 403 or 429 that names a rate limit (an exhausted window or a `Retry-After`). */
  readonly rejected: boolean;
}

/**
 * Reads the budget from a response.
 *
 * @example
 * readBudget(200, { 'x-ratelimit-limit': '5000', 'x-ratelimit-remaining': '4999',
 *   'x-ratelimit-reset': '1700000000' }, now);
 * // { observation: { limit: 5000, remaining: 4999, resetAt: 1_700_000_000_000 }, rejected: false }
 */
export function readBudget(status: number, headers: HeaderRecord, now: number): BudgetReading {
  const epochPrefix = EPOCH_RESET_PREFIXES.find((p) => headers[`${p}remaining`] !== undefined);
  const prefix = epochPrefix ?? 'ratelimit-';
  const limit = count(headers[`${prefix}limit`]);
  const remaining = count(headers[`${prefix}remaining`]);
  const resetAt = epochPrefix
    ? (count(headers[`${epochPrefix}reset`]) ?? Number.NaN) * 1_000
    : resetTime(headers['ratelimit-reset'], now);
  const retryAfter = status >= 400 ? parseRetryAfter(headers['retry-after'], now) : undefined;
  const observation: Observation = {
    ...(limit !== undefined ? { limit } : {}),
    ...(remaining !== undefined && resetAt !== undefined && Number.isFinite(resetAt)
      ? { remaining, resetAt }
      : {}),
    ...(retryAfter !== undefined ? { pauseUntil: now + retryAfter } : {}),
  };
  const refusal = status === 403 || status === 429;
  const rejected = refusal && (remaining === 0 || retryAfter !== undefined);
  return { observation, rejected };
}
