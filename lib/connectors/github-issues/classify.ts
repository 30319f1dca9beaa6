import { classifyDefault, describeHttpError } from '../../retry/classify.js';
import { type Classification, SourceHttpError } from '../../retry/errors.js';
import { parseRateLimitReset, parseRetryAfter } from '../../retry/retry-after.js';

/**
 * GitHub's own meaning of 403 and 429, from its REST API documentation on rate limits:
 *
 * - primary limit: `x-ratelimit-remaining: 0` — wait until `x-ratelimit-reset` (epoch seconds);
 * - `retry-after` present — wait that many seconds;
 * - secondary limit (a 403 or 429 whose body says so) without headers — wait at least a minute;
 * - any other 403 is a real permission problem (token scope, SSO, a blocked repository).
 */

/** GitHub asks for "at least one minute" when a secondary limit response has no headers. */
export const SECONDARY_RATE_LIMIT_WAIT_MS = 60_000;

/** When the primary limit is used up but the reset header is missing, try again after a minute. */
const MISSING_RESET_WAIT_MS = 60_000;

// "You have exceeded a secondary rate limit"; older responses said "abuse detection mechanism".
const SECONDARY_LIMIT_BODY = /secondary rate limit|abuse detection/i;

function classifyRateLimit(error: SourceHttpError, now: number): Classification | undefined {
  const where = describeHttpError(error);
  const retryAfter = parseRetryAfter(error.headers['retry-after'], now);
  if (retryAfter !== undefined) {
    return { errorClass: 'transient', waitMs: retryAfter, reason: `GitHub asked to retry later: ${where}` };
  }
  if (error.headers['x-ratelimit-remaining']?.trim() === '0') {
    const waitMs = parseRateLimitReset(error.headers, now) ?? MISSING_RESET_WAIT_MS;
    return { errorClass: 'transient', waitMs, reason: `GitHub rate limit exhausted: ${where}` };
  }
  if (SECONDARY_LIMIT_BODY.test(error.bodyExcerpt)) {
    return {
      errorClass: 'transient',
      waitMs: SECONDARY_RATE_LIMIT_WAIT_MS,
      reason: `GitHub secondary rate limit: ${where}`,
    };
  }
  return undefined;
}

/**
 * Classifies an error of the `github-issues` connector: GitHub's rate-limit variants first, then
 * {@link classifyDefault}.
 *
 * @param now - epoch ms; the reset header is an absolute time.
 */
export function classifyGitHub(error: unknown, now: number): Classification {
  if (error instanceof SourceHttpError && (error.status === 403 || error.status === 429)) {
    const limited = classifyRateLimit(error, now);
    if (limited) return limited;
    if (error.status === 403) {
      return { errorClass: 'permanent', reason: `permission denied: ${describeHttpError(error)}` };
    }
  }
  return classifyDefault(error, now);
}
