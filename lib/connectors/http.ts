import { ParseBudgetError, parseBudgetExcess } from '../json/budget.js';
import { parseJson } from '../json/lossless.js';
import { ClassifiedError, SourceHttpError, SourceResponseError, safeUrl } from '../retry/errors.js';
import type { HeaderRecord } from '../retry/retry-after.js';
import { raiseHint, SOURCE_LIMITS, SourceLimitError } from './limits.js';

/**
 * The one HTTP helper connectors share: a JSON GET with a timeout, whose failures are already the
 * errors classification understands (`SourceHttpError`, `SourceResponseError`, or the network
 * errors of `fetch` itself, which the default classifier recognises).
 */

/** A request that hangs longer than this is a transient failure, not a stuck worker. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

/** Bytes of an error response kept for dead letters and logs: enough to read a message, bounded. */
export const MAX_BODY_EXCERPT_BYTES = 2_048;

/** Redirect hops followed before a request fails; browsers allow 20, an API needs one or two. */
export const MAX_REDIRECTS = 5;

/** Statuses that redirect a GET (303 included: the next request is a GET either way). */
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/**
 * Headers kept on a redirect to another origin, when the connector allows following one at all.
 * An allow-list, not a deny-list: a credential may travel in a header of any name (`x-api-key`).
 */
const CROSS_ORIGIN_SAFE_HEADERS = new Set(['accept', 'user-agent']);

/**
 * What to do with a redirect to another origin: `refuse` (default) fails the request as a
 * permanent error; `follow-without-credentials` follows it sending only `Accept` and `User-Agent`.
 */
export type CrossOriginRedirects = 'refuse' | 'follow-without-credentials';

/** Options of {@link fetchJson}. */
export interface FetchJsonOptions {
  /** Request headers, credentials included: they are only ever sent to the first URL's origin. */
  readonly headers?: Record<string, string>;
  /** Default `refuse`, see {@link CrossOriginRedirects}. */
  readonly crossOriginRedirects?: CrossOriginRedirects;
  /** Aborts the request from outside (the worker shutting down); combined with the timeout. */
  readonly signal?: AbortSignal;
  /** Default {@link DEFAULT_REQUEST_TIMEOUT_MS}. */
  readonly timeoutMs?: number;
  /**
   * Most bytes of a 2xx body read, counted after decompression (default the source limits'
   * default, see `limits.ts`): a longer body, or a `Content-Length` announcing one, is refused.
   */
  readonly maxBodyBytes?: number;
}

/** A parsed 2xx JSON response. */
export interface JsonResponse {
  readonly body: unknown;
  /** Header names lower-cased, as `fetch` reports them. */
  readonly headers: HeaderRecord;
  readonly status: number;
  /** The final URL after redirects (relative links in the response resolve against it). */
  readonly url: string;
}

function headerRecord(headers: Headers): Record<string, string> {
  const record: Record<string, string> = {};
  headers.forEach((value, name) => {
    record[name.toLowerCase()] = value;
  });
  return record;
}

/**
 * The first `maxBytes` of a body as text, without downloading the rest: an error page can be
 * megabytes of HTML, and only its head is worth keeping.
 */
export async function readExcerpt(response: Response, maxBytes = MAX_BODY_EXCERPT_BYTES): Promise<string> {
  const reader = response.body?.getReader();
  if (!reader) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < maxBytes) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  const bytes = Buffer.concat(chunks).subarray(0, maxBytes);
  // `stream: true` holds back a multi-byte character cut in half instead of emitting U+FFFD.
  let text = new TextDecoder().decode(bytes, { stream: true });
  while (Buffer.byteLength(text) > maxBytes) text = text.slice(0, -1);
  return text;
}

/**
 * GETs `url` and parses its JSON body. Redirects are followed by hand (`redirect: 'manual'`),
 * because `fetch` strips only `Authorization` on a cross-origin hop while connectors may send a
 * credential in any header: same-origin hops keep every header, a cross-origin hop is refused
 * (or, when allowed, followed with {@link CROSS_ORIGIN_SAFE_HEADERS} only).
 *
 * @throws SourceHttpError for a non-2xx status, with lower-cased headers and a ≤ 2 KB body excerpt.
 * @throws SourceResponseError when a 2xx body is not JSON (a proxy's HTML page, a truncated body).
 * @throws ClassifiedError (permanent) for a refused cross-origin redirect, a redirect without a
 *   usable `Location`, or more than {@link MAX_REDIRECTS} hops.
 * @throws the `fetch` network errors (`TypeError: fetch failed`, `TimeoutError`, `AbortError`) as is.
 */
export async function fetchJson(
  fetchFn: typeof fetch,
  url: string,
  options: FetchJsonOptions = {},
): Promise<JsonResponse> {
  const { signal, done } = requestSignal(options.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS, options.signal);
  try {
    return await fetchFollowing(fetchFn, url, options, signal);
  } finally {
    done();
  }
}

/**
 * The signal of one request: aborted by its own timer (a `TimeoutError`) or by `outer`. One
 * explicit timer per request, cleared when the request is done: `AbortSignal.any` over
 * `AbortSignal.timeout` stops aborting once a major GC has collected the timeout signal (Node 20),
 * which leaves a trickling body holding the worker until the source closes it.
 */
function requestSignal(timeoutMs: number, outer?: AbortSignal): { signal: AbortSignal; done: () => void } {
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new DOMException(`the request took more than ${timeoutMs} ms`, 'TimeoutError')),
    timeoutMs,
  );
  const onAbort = () => controller.abort(outer?.reason);
  if (outer?.aborted) onAbort();
  else outer?.addEventListener('abort', onAbort, { once: true });
  return {
    signal: controller.signal,
    done: () => {
      clearTimeout(timer);
      outer?.removeEventListener('abort', onAbort);
    },
  };
}

async function fetchFollowing(
  fetchFn: typeof fetch,
  url: string,
  options: FetchJsonOptions,
  signal: AbortSignal,
): Promise<JsonResponse> {
  const origin = new URL(url).origin;
  let current = url;
  let headers = options.headers;
  for (let hop = 0; ; hop++) {
    const response = await fetchFn(current, { method: 'GET', headers, signal, redirect: 'manual' });
    const location = response.headers.get('location');
    if (!REDIRECT_STATUSES.has(response.status) || location === null)
      return readJson(response, current, options.maxBodyBytes ?? SOURCE_LIMITS.bodyBytes.default);
    await response.body?.cancel().catch(() => undefined);
    if (hop >= MAX_REDIRECTS) {
      throw new ClassifiedError('permanent', `more than ${MAX_REDIRECTS} redirects from ${safeUrl(url)}`);
    }
    const next = redirectTarget(location, current);
    if (new URL(next).origin !== origin) {
      if (options.crossOriginRedirects !== 'follow-without-credentials') {
        throw new ClassifiedError(
          'permanent',
          `redirect from ${safeUrl(current)} to another origin (${new URL(next).origin}) refused: ` +
            "credentials are only sent to the source's own origin; point the source at the final URL",
        );
      }
      headers = Object.fromEntries(
        Object.entries(headers ?? {}).filter(([name]) => CROSS_ORIGIN_SAFE_HEADERS.has(name.toLowerCase())),
      );
    }
    current = next;
  }
}

function redirectTarget(location: string, from: string): string {
  let next: URL;
  try {
    next = new URL(location, from);
  } catch (cause) {
    throw new ClassifiedError('permanent', `redirect from ${safeUrl(from)} has an invalid Location`, {
      cause,
    });
  }
  if (next.protocol !== 'https:' && next.protocol !== 'http:') {
    throw new ClassifiedError('permanent', `redirect from ${safeUrl(from)} to a non-HTTP URL refused`);
  }
  return next.href;
}

async function readJson(response: Response, requestedUrl: string, maxBytes: number): Promise<JsonResponse> {
  const finalUrl = response.url || requestedUrl;
  const headers = headerRecord(response.headers);
  if (!response.ok) {
    throw new SourceHttpError(response.status, headers, await readExcerpt(response), finalUrl);
  }
  const text = await readBounded(response, finalUrl, maxBytes);
  // Measured before it is parsed: the byte cap bounds the text, not what parsing it would build.
  const excess = parseBudgetExcess(text);
  if (excess) {
    // Permanent: the same answer would go over again. A fixed budget, not a source setting.
    throw new ClassifiedError(
      'permanent',
      `the response from ${safeUrl(finalUrl)} ${new ParseBudgetError(excess).message}; refused unparsed (the parse budget, docs/limits.md)`,
    );
  }
  try {
    // Lossless: a 64-bit id or a 40-digit amount is kept as written, never rounded to a double.
    return { body: parseJson(text), headers, status: response.status, url: finalUrl };
  } catch (cause) {
    const type = headers['content-type'] ?? 'no content-type';
    throw new SourceResponseError(`response from ${safeUrl(finalUrl)} is not JSON (${type})`, finalUrl, {
      cause,
    });
  }
}

function bodyTooLarge(url: string, what: string, maxBytes: number): SourceLimitError {
  return new SourceLimitError(
    'maxBodyBytes',
    `the response from ${safeUrl(url)} ${what}, more than this source's limit of ${maxBytes} bytes ` +
      `(${raiseHint('maxBodyBytes', SOURCE_LIMITS.bodyBytes.ceiling)})`,
  );
}

/**
 * The body as text, read through a count of the bytes `fetch` delivers — decompressed, so a small
 * gzip body that inflates to gigabytes stops at `maxBytes` instead of exhausting memory. A
 * `Content-Length` over the limit is refused before anything is read.
 *
 * @throws SourceLimitError (permanent) when the body is, or announces itself, larger than `maxBytes`.
 */
async function readBounded(response: Response, url: string, maxBytes: number): Promise<string> {
  const declared = Number(response.headers.get('content-length') ?? Number.NaN);
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel().catch(() => undefined);
    throw bodyTooLarge(url, `announces ${declared} bytes (Content-Length)`, maxBytes);
  }
  const reader = response.body?.getReader();
  if (!reader) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw bodyTooLarge(url, `is larger than ${maxBytes} bytes once decompressed`, maxBytes);
    }
    chunks.push(value);
  }
  // TextDecoder drops a byte-order mark, as `response.text()` does.
  return new TextDecoder().decode(Buffer.concat(chunks, size));
}

/**
 * `candidate` as an absolute URL (resolved against `relativeTo`, default `base`), provided it is on
 * `base`'s origin. Connectors send credentials with every request, so a pagination link or a
 * stored cursor that points elsewhere must never be followed: it would hand the token to another host.
 *
 * @throws SourceResponseError when `candidate` is not a URL or is on another origin.
 */
export function sameOriginUrl(candidate: string, base: string, relativeTo: string = base): string {
  let url: URL;
  try {
    url = new URL(candidate, relativeTo);
  } catch (cause) {
    throw new SourceResponseError('pagination link is not a valid URL', base, { cause });
  }
  const origin = new URL(base).origin;
  if (url.origin !== origin) {
    throw new SourceResponseError(`pagination link ${safeUrl(url.href)} is not on ${origin}`, url.href);
  }
  return url.href;
}
