/**
 * Waits a source asks for, read from its response headers ("the source knows best").
 *
 * Every function here takes lower-cased header names (as `fetch` exposes them) and an injected
 * `now`, and returns milliseconds to wait or `undefined`. Garbage is `undefined` (the caller falls
 * back to its backoff), never NaN; a time in the past is 0 (retry now), never negative.
 */

/** Lower-cased header name → value, as produced by `fetchJson`. */
export type HeaderRecord = Readonly<Record<string, string>>;

// A signed decimal number and nothing else: `Number('')` is 0 and `Number(' 1e3 ')` is 1000,
// both of which a header parser must not accept as a delay.
const DECIMAL = /^[+-]?\d+(\.\d+)?$/;

// The three HTTP-date forms of RFC 9110 §5.6.7. Checked before Date.parse because V8 parses
// almost anything ("foo 1" is 2001-01-01), which would turn garbage into a plausible wait.
const IMF_FIXDATE = /^[A-Za-z]{3}, \d{2} [A-Za-z]{3} \d{4} \d{2}:\d{2}:\d{2} GMT$/;
const RFC850_DATE = /^[A-Za-z]{6,9}, \d{2}-[A-Za-z]{3}-\d{2} \d{2}:\d{2}:\d{2} GMT$/;
const ASCTIME_DATE = /^[A-Za-z]{3} [A-Za-z]{3} [ \d]\d \d{2}:\d{2}:\d{2} \d{4}$/;

// Above this, a "delta seconds" reset value is really an epoch time (GitLab sends `RateLimit-Reset`
// as epoch seconds, the IETF draft as a delta); 1e9 s of delta would be 31 years.
const EPOCH_SECONDS_THRESHOLD = 1e9;

/** Seconds (possibly fractional) as a non-negative whole number of ms; undefined when not finite. */
function secondsToMs(seconds: number): number | undefined {
  const ms = Math.ceil(seconds * 1_000);
  return Number.isFinite(ms) ? Math.max(0, ms) : undefined;
}

function parseDecimal(value: string | undefined): number | undefined {
  const trimmed = value?.trim();
  return trimmed !== undefined && DECIMAL.test(trimmed) ? Number(trimmed) : undefined;
}

function parseHttpDate(value: string): number | undefined {
  if (IMF_FIXDATE.test(value) || RFC850_DATE.test(value)) return Date.parse(value);
  // asctime carries no zone but is GMT by definition; without the suffix V8 would read local time.
  if (ASCTIME_DATE.test(value)) return Date.parse(`${value} GMT`);
  return undefined;
}

/**
 * Parses a `Retry-After` value: delta seconds (`120`) or an HTTP-date, relative to `now`.
 *
 * @example
 * parseRetryAfter('120', now); // 120_000
 * parseRetryAfter('Wed, 21 Oct 2015 07:28:00 GMT', Date.parse('2015-10-21T07:27:00Z')); // 60_000
 * parseRetryAfter('soon', now); // undefined
 */
export function parseRetryAfter(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  const seconds = parseDecimal(value);
  if (seconds !== undefined) return secondsToMs(seconds);
  const at = parseHttpDate(value.trim());
  if (at === undefined || !Number.isFinite(at)) return undefined;
  return Math.max(0, at - now);
}

/** Header families whose reset is epoch seconds: GitHub's spelling, then Okta's and X's. */
export const EPOCH_RESET_PREFIXES = ['x-ratelimit-', 'x-rate-limit-'] as const;

/** True when the remaining-requests header says the window is used up (or is absent). */
function exhausted(remaining: string | undefined): boolean {
  return remaining === undefined || parseDecimal(remaining) === 0;
}

/**
 * The wait until a rate-limit window resets, when the window is exhausted.
 *
 * - `X-RateLimit-Reset` (GitHub, many others) and `X-Rate-Limit-Reset` (Okta, X/Twitter): epoch
 *   seconds.
 * - `RateLimit-Reset` (IETF draft): delta seconds; values that can only be epoch seconds are read
 *   as such (GitLab).
 *
 * The reset only counts when the matching `…-Remaining` header is `0` or absent: GitHub sends the
 * reset on every response, and a 500 with 4,999 requests left must not wait for the next window.
 */
export function parseRateLimitReset(headers: HeaderRecord, now: number): number | undefined {
  for (const prefix of EPOCH_RESET_PREFIXES) {
    const epoch = parseDecimal(headers[`${prefix}reset`]);
    if (epoch !== undefined && exhausted(headers[`${prefix}remaining`]))
      return secondsToMs(epoch - now / 1_000);
  }
  const draft = parseDecimal(headers['ratelimit-reset']);
  if (draft !== undefined && exhausted(headers['ratelimit-remaining'])) {
    return secondsToMs(draft > EPOCH_SECONDS_THRESHOLD ? draft - now / 1_000 : draft);
  }
  return undefined;
}

/**
 * The wait a response asks for: `Retry-After` first (an explicit instruction for this request),
 * then a rate-limit reset. Undefined when the headers ask for nothing usable.
 */
export function waitFromHeaders(headers: HeaderRecord, now: number): number | undefined {
  return parseRetryAfter(headers['retry-after'], now) ?? parseRateLimitReset(headers, now);
}
