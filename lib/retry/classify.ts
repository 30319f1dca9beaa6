import {
  type Classification,
  ClassifiedError,
  ItemValidationError,
  SourceHttpError,
  SourceResponseError,
  safeUrl,
} from './errors.js';
import { waitFromHeaders } from './retry-after.js';

/**
 * The default classification, for any connector that does not know better. Pure:
 * the only clock is the `now` argument, used to turn an HTTP-date `Retry-After` into a wait.
 */

/** Statuses that mean "the source is briefly unable", whatever the source. */
export const TRANSIENT_STATUSES = [408, 429, 500, 502, 503, 504] as const;

/** Connection-level failures that heal on their own: a dropped socket, a DNS hiccup, a slow handshake. */
export const TRANSIENT_NETWORK_CODES = [
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_CLOSED',
] as const;

/** TLS failures: a wrong or expired certificate does not fix itself within a retry window. */
export const PERMANENT_NETWORK_CODES = [
  'CERT_HAS_EXPIRED',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'ERR_TLS_CERT_ALTNAME_INVALID',
] as const;

const STATUS_HINTS: Readonly<Record<number, string>> = {
  400: 'bad request',
  401: 'unauthorized, check the credentials',
  403: 'forbidden',
  404: 'not found',
  408: 'request timeout',
  422: 'unprocessable request',
  429: 'rate limited',
  500: 'server error',
  502: 'bad gateway',
  503: 'service unavailable',
  504: 'gateway timeout',
};

const MAX_REASON_LENGTH = 300;

/**
 * A reason fit for a dead-letter row: URLs lose their query strings (which may carry tokens),
 * credentials after `Bearer`/`Basic` and GitHub token shapes are masked, whitespace is collapsed, length bounded.
 */
export function safeReason(text: string): string {
  const cleaned = text
    .replace(/https?:\/\/[^\s"'`<>]+/g, reasonUrl)
    .replace(/\b(bearer|basic)\s+[^\s"',;]+/gi, '$1 <redacted>')
    .replace(/\b(gh[pousr]_|github_pat_)\w+/g, '$1<redacted>')
    .replace(/\s+/g, ' ')
    .trim();
  return cleaned.length > MAX_REASON_LENGTH ? `${cleaned.slice(0, MAX_REASON_LENGTH - 1)}…` : cleaned;
}

/**
 * One URL of a reason without its query string. Prose punctuation right after a URL
 * (`(bound to https://a.example)`, `https://a.example, https://b.example`) is not part of it, and
 * a bare origin stays as written: it has no query to drop.
 */
function reasonUrl(match: string): string {
  const [, url = match, tail = ''] = /^(.*?)([),.;:\]]*)$/.exec(match) ?? [];
  return /^https?:\/\/[^/?#]+$/.test(url) ? `${url}${tail}` : `${safeUrl(url)}${tail}`;
}

/** `HTTP 404 (not found) from https://host/path`, with the query string already dropped. */
export function describeHttpError(error: SourceHttpError): string {
  const hint = STATUS_HINTS[error.status];
  return `HTTP ${error.status}${hint ? ` (${hint})` : ''} from ${safeUrl(error.url)}`;
}

function classifyHttp(error: SourceHttpError, now: number): Classification {
  const reason = describeHttpError(error);
  const retryable =
    (TRANSIENT_STATUSES as readonly number[]).includes(error.status) ||
    (error.status >= 500 && error.status <= 599);
  if (!retryable) return { errorClass: 'permanent', reason };
  const waitMs = waitFromHeaders(error.headers, now);
  return waitMs === undefined
    ? { errorClass: 'transient', reason }
    : { errorClass: 'transient', reason, waitMs };
}

/** Every error in the cause chain (and inside AggregateErrors), bounded against cycles. */
function causeChain(error: unknown): unknown[] {
  const chain: unknown[] = [];
  const pending: unknown[] = [error];
  while (pending.length > 0 && chain.length < 10) {
    const current = pending.shift();
    if (typeof current !== 'object' || current === null || chain.includes(current)) continue;
    chain.push(current);
    if (current instanceof AggregateError) pending.push(...current.errors);
    pending.push((current as { cause?: unknown }).cause);
  }
  return chain;
}

function field(value: unknown, key: 'code' | 'name' | 'message'): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const found = (value as Record<string, unknown>)[key];
  return typeof found === 'string' ? found : undefined;
}

/** Undici's `TypeError: fetch failed`, node:net errors and aborted or timed-out requests. */
function classifyNetwork(error: unknown): Classification | undefined {
  const chain = causeChain(error);
  const names = chain.map((e) => field(e, 'name'));
  if (names.includes('TimeoutError')) return { errorClass: 'transient', reason: 'request timed out' };
  if (names.includes('AbortError')) return { errorClass: 'transient', reason: 'request aborted' };
  const codes = chain.map((e) => field(e, 'code')).filter((c): c is string => c !== undefined);
  const permanent = codes.find((c) => (PERMANENT_NETWORK_CODES as readonly string[]).includes(c));
  if (permanent) return { errorClass: 'permanent', reason: `TLS certificate error (${permanent})` };
  const transient = codes.find((c) => (TRANSIENT_NETWORK_CODES as readonly string[]).includes(c));
  if (transient) return { errorClass: 'transient', reason: `network error (${transient})` };
  // Undici wraps every connection-level failure in this TypeError; an unlisted cause is still the
  // network, not our code, so it gets the retries rather than a dead letter on the first blip.
  if (error instanceof TypeError && error.message === 'fetch failed') {
    const cause = field(chain[1], 'message');
    return { errorClass: 'transient', reason: safeReason(`network error (${cause ?? 'fetch failed'})`) };
  }
  return undefined;
}

function describeUnknown(error: unknown): string {
  if (error instanceof Error) return safeReason(`${error.name}: ${error.message}`);
  return safeReason(`non-error thrown: ${String(error)}`);
}

/**
 * The default classification.
 *
 * | error | class |
 * |---|---|
 * | `ClassifiedError` | as the thrower said |
 * | HTTP 408, 429, 5xx | transient, waiting for `Retry-After` / rate-limit reset when given |
 * | HTTP 400, 401, 403, 404, 422, other 4xx (and 1xx/3xx) | permanent |
 * | connection drops, DNS failures, timeouts, aborts | transient |
 * | TLS certificate errors | permanent |
 * | `SourceResponseError` (body not JSON / wrong shape) | transient: a proxy may answer HTML once |
 * | `ItemValidationError` | permanent |
 * | anything else | permanent: an unknown bug must not be retried forever |
 *
 * @param now - epoch ms, for HTTP-date `Retry-After` and epoch rate-limit resets.
 */
export function classifyDefault(error: unknown, now: number): Classification {
  if (error instanceof ClassifiedError) {
    const reason = safeReason(error.message);
    return error.waitMs === undefined
      ? { errorClass: error.errorClass, reason }
      : { errorClass: error.errorClass, reason, waitMs: error.waitMs };
  }
  if (error instanceof SourceHttpError) return classifyHttp(error, now);
  if (error instanceof SourceResponseError)
    return { errorClass: 'transient', reason: safeReason(error.message) };
  if (error instanceof ItemValidationError)
    return { errorClass: 'permanent', reason: safeReason(error.message) };
  return classifyNetwork(error) ?? { errorClass: 'permanent', reason: describeUnknown(error) };
}
