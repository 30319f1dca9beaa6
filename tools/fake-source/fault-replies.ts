import { STATUS_CODES } from 'node:http';
import type { FaultDecision } from './faults.js';
import { json, type Reply } from './http.js';

/** Which API a route imitates: faults are answered the way that API answers them. */
export type Shape = 'rest' | 'github' | 'gitlab';

const GITHUB_RATE_LIMIT_DOCS =
  'https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-primary-rate-limits';

// A 502 usually comes from a proxy in front of the API, and proxies answer HTML: a connector
// must classify by status, not choke on a body that is not JSON.
const BAD_GATEWAY_HTML =
  '<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center></body></html>\n';

/** How a 429 says when to come back (the `rateLimitReset` trait). */
export type ResetFamily = 'retry-after' | 'retry-after-date' | 'x-rate-limit-reset' | 'ratelimit-reset';

/** The headers that say "come back in `seconds`" the way `family` says it. */
function resetHeaders(family: ResetFamily, seconds: number, nowMs: number): Record<string, string> {
  switch (family) {
    case 'retry-after':
      return { 'retry-after': String(seconds) };
    case 'retry-after-date':
      // An HTTP date has whole seconds: round up, so the date is never before the real reset.
      return { 'retry-after': new Date(Math.ceil(nowMs / 1_000 + seconds) * 1_000).toUTCString() };
    case 'x-rate-limit-reset':
      return { 'x-rate-limit-reset': String(Math.ceil(nowMs / 1_000 + seconds)) };
    case 'ratelimit-reset':
      return { 'ratelimit-remaining': '0', 'ratelimit-reset': String(seconds) };
  }
}

/**
 * The response of an injected fault. `nowMs` turns a rate-limit window's end into the
 * `Retry-After` of the rest-json shape; GitHub's shape carries it in `X-RateLimit-Reset`, which
 * the server adds to every response.
 */
export function faultReply(
  shape: Shape,
  decision: FaultDecision,
  nowMs: number,
  resetFamily: ResetFamily = 'retry-after',
): Reply {
  if (shape === 'gitlab') return gitlabFaultReply(decision, nowMs);
  const comeBack = (seconds: number) =>
    shape === 'github' ? { 'retry-after': String(seconds) } : resetHeaders(resetFamily, seconds, nowMs);
  switch (decision.kind) {
    case 'none':
      throw new Error('faultReply called without a fault');
    case 'transient':
      if (decision.status === 502)
        return { status: 502, raw: { contentType: 'text/html', text: BAD_GATEWAY_HTML } };
      return json(decision.status, { message: STATUS_CODES[decision.status] });
    case 'throttled': {
      const message =
        shape === 'github'
          ? 'You have exceeded a secondary rate limit. Please wait a few minutes before you try again.'
          : 'Too Many Requests';
      return json(429, { message }, comeBack(decision.retryAfterSeconds));
    }
    case 'rate-limit-window': {
      if (shape === 'github') {
        return json(403, { message: 'API rate limit exceeded', documentation_url: GITHUB_RATE_LIMIT_DOCS });
      }
      // Generic APIs signal an exhausted quota with 429; a 403 would read as "forbidden" to them.
      const retryAfter = Math.max(1, Math.ceil((decision.resetAtMs - nowMs) / 1_000));
      return json(429, { message: 'Rate limit exceeded' }, comeBack(retryAfter));
    }
    case 'forced': {
      const message =
        decision.status === 401 && shape === 'github'
          ? 'Bad credentials'
          : (STATUS_CODES[decision.status] ?? 'Forced failure');
      return json(decision.status, { message });
    }
  }
}

/**
 * GitLab's answers: a throttled request gets Rack::Attack's plain-text 429 `Retry later` with
 * `Retry-After` and `RateLimit-*` headers (`RateLimit-Reset` in epoch seconds); the fake's quota
 * window is answered with a 403 carrying the same headers — what GitLab's protected paths and
 * older instances send, and what a connector must not take for a permission problem.
 */
function gitlabFaultReply(decision: FaultDecision, nowMs: number): Reply {
  const throttle = (status: number, resetAtMs: number): Reply => {
    const retryAfter = Math.max(1, Math.ceil((resetAtMs - nowMs) / 1_000));
    return {
      status,
      raw: { contentType: 'text/plain', text: 'Retry later\n' },
      headers: {
        'retry-after': String(retryAfter),
        'ratelimit-name': 'throttle_authenticated_api',
        'ratelimit-limit': '2000',
        'ratelimit-observed': '2001',
        'ratelimit-remaining': '0',
        'ratelimit-reset': String(Math.ceil(resetAtMs / 1_000)),
        'ratelimit-resettime': new Date(resetAtMs).toUTCString(),
      },
    };
  };
  switch (decision.kind) {
    case 'none':
      throw new Error('faultReply called without a fault');
    case 'transient':
      if (decision.status === 502)
        return { status: 502, raw: { contentType: 'text/html', text: BAD_GATEWAY_HTML } };
      return json(decision.status, { message: `${decision.status} ${STATUS_CODES[decision.status]}` });
    case 'throttled':
      return throttle(429, nowMs + decision.retryAfterSeconds * 1_000);
    case 'rate-limit-window':
      return throttle(403, decision.resetAtMs);
    case 'forced':
      return json(decision.status, {
        message: `${decision.status} ${STATUS_CODES[decision.status] ?? 'Forced failure'}`,
      });
  }
}
