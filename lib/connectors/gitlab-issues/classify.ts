import { classifyDefault, describeHttpError } from '../../retry/classify.js';
import { type Classification, SourceHttpError } from '../../retry/errors.js';
import { parseRateLimitReset, parseRetryAfter } from '../../retry/retry-after.js';

/**
 * GitLab's own meaning of 429 and 403, from its rate-limit documentation: a throttled
 * request is answered 429 (some protected paths and older instances answer 403) with
 * `Retry-After` (seconds) and `RateLimit-Remaining` / `RateLimit-Reset` (epoch seconds). A 403
 * carrying those headers is a rate limit, not a permission problem; a 403 without them is.
 */

/** When GitLab throttles without saying for how long: its limits are per minute. */
export const GITLAB_DEFAULT_THROTTLE_WAIT_MS = 60_000;

function isThrottleAnswer(error: SourceHttpError): boolean {
  const h = error.headers;
  if (h['retry-after'] !== undefined) return true;
  if (h['ratelimit-remaining'] !== undefined) return h['ratelimit-remaining'].trim() === '0';
  return h['ratelimit-reset'] !== undefined;
}

/**
 * Classifies an error of the `gitlab-issues` connector: GitLab's throttling first (429, and 403
 * with rate-limit headers), then {@link classifyDefault} (401 and other 403s permanent, 5xx and
 * network errors transient).
 *
 * @param now - epoch ms; `RateLimit-Reset` is an absolute time.
 */
export function classifyGitLab(error: unknown, now: number): Classification {
  if (!(error instanceof SourceHttpError) || (error.status !== 429 && error.status !== 403)) {
    return classifyDefault(error, now);
  }
  const where = describeHttpError(error);
  if (!isThrottleAnswer(error)) {
    if (error.status === 403) return { errorClass: 'permanent', reason: `permission denied: ${where}` };
    return {
      errorClass: 'transient',
      waitMs: GITLAB_DEFAULT_THROTTLE_WAIT_MS,
      reason: `GitLab throttled: ${where}`,
    };
  }
  const waitMs =
    parseRetryAfter(error.headers['retry-after'], now) ??
    parseRateLimitReset(error.headers, now) ??
    GITLAB_DEFAULT_THROTTLE_WAIT_MS;
  return { errorClass: 'transient', waitMs, reason: `GitLab rate limit: ${where}` };
}
