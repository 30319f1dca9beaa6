import { STATUS_CODES } from 'node:http';
import type { FaultDecision } from './faults.js';
import { json, type Reply } from './http.js';

/** Which API a route imitates: faults are answered the way that API answers them. */
export type Shape = 'rest' | 'github';

const GITHUB_RATE_LIMIT_DOCS =
  'https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-primary-rate-limits';

// A 502 usually comes from a proxy in front of the API, and proxies answer HTML: a connector
// must classify by status, not choke on a body that is not JSON.
const BAD_GATEWAY_HTML =
  '<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center></body></html>\n';

/**
 * The response of an injected fault. `nowMs` turns a rate-limit window's end into the
 * `Retry-After` of the rest-json shape; GitHub's shape carries it in `X-RateLimit-Reset`, which
 * the server adds to every response.
 */
export function faultReply(shape: Shape, decision: FaultDecision, nowMs: number): Reply {
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
      return json(429, { message }, { 'retry-after': String(decision.retryAfterSeconds) });
    }
    case 'rate-limit-window': {
      if (shape === 'github') {
        return json(403, { message: 'API rate limit exceeded', documentation_url: GITHUB_RATE_LIMIT_DOCS });
      }
      // Generic APIs signal an exhausted quota with 429; a 403 would read as "forbidden" to them.
      const retryAfter = Math.max(1, Math.ceil((decision.resetAtMs - nowMs) / 1_000));
      return json(429, { message: 'Rate limit exceeded' }, { 'retry-after': String(retryAfter) });
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
