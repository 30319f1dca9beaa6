import type { IncomingHttpHeaders } from 'node:http';
import { FakeSourceError } from './errors.js';

/** Settings of a {@link SharedQuota}. */
export interface SharedQuotaOptions {
  /** Requests per window and token. */
  readonly limit: number;
  /** Window length; windows are aligned to multiples of it since the epoch (resets on whole seconds). */
  readonly windowSeconds: number;
  /** Clock of the windows. Default `Date.now`. */
  readonly now?: () => number;
}

/** What the quota decided for one request. */
export interface QuotaVerdict {
  readonly allowed: boolean;
  /** GitHub's `X-RateLimit-*` headers after this request, sent on every response. */
  readonly headers: Record<string, string>;
}

interface TokenWindow {
  start: number;
  used: number;
}

/**
 * A rate limit shared by every request that carries the same token, across repositories and
 * across fake sources given the same instance — GitHub's primary limit: `limit` requests per
 * window and token; past it, requests are refused (and not counted) until the window resets.
 * It counts refused requests, so a benchmark can report what a client wasted.
 */
export class SharedQuota {
  private readonly windows = new Map<string, TokenWindow>();
  private readonly windowMs: number;
  private readonly now: () => number;
  private rejectedCount = 0;
  private admittedCount = 0;

  constructor(readonly options: SharedQuotaOptions) {
    if (!Number.isInteger(options.limit) || options.limit < 1) {
      throw new FakeSourceError('quota limit must be an integer ≥ 1');
    }
    if (!Number.isInteger(options.windowSeconds) || options.windowSeconds < 1) {
      throw new FakeSourceError('quota windowSeconds must be an integer ≥ 1');
    }
    this.windowMs = options.windowSeconds * 1_000;
    this.now = options.now ?? Date.now;
  }

  /** Counts one request of `token` if its window has room. */
  admit(token: string): QuotaVerdict {
    const window = this.windowOf(token);
    const allowed = window.used < this.options.limit;
    if (allowed) {
      window.used += 1;
      this.admittedCount += 1;
    } else {
      this.rejectedCount += 1;
    }
    return { allowed, headers: this.headersOf(window) };
  }

  /** Requests `token` has left in the current window. */
  remainingOf(token: string): number {
    return this.options.limit - this.windowOf(token).used;
  }

  /** Requests refused for want of quota so far. */
  get rejected(): number {
    return this.rejectedCount;
  }

  /** Requests admitted so far. */
  get admitted(): number {
    return this.admittedCount;
  }

  private windowOf(token: string): TokenWindow {
    const start = Math.floor(this.now() / this.windowMs) * this.windowMs;
    let window = this.windows.get(token);
    if (!window || window.start !== start) {
      window = { start, used: 0 };
      this.windows.set(token, window);
    }
    return window;
  }

  private headersOf(window: TokenWindow): Record<string, string> {
    return {
      'x-ratelimit-limit': String(this.options.limit),
      'x-ratelimit-remaining': String(this.options.limit - window.used),
      'x-ratelimit-reset': String((window.start + this.windowMs) / 1_000),
      'x-ratelimit-used': String(window.used),
      'x-ratelimit-resource': 'core',
    };
  }
}

/** The token a request carries (GitHub's `Authorization`, GitLab's `PRIVATE-TOKEN`), or `anonymous`. */
export function requestToken(headers: IncomingHttpHeaders): string {
  const auth = headers.authorization ?? headers['private-token'];
  const value = Array.isArray(auth) ? auth[0] : auth;
  return value ? value.replace(/^(bearer|token)\s+/i, '') : 'anonymous';
}
