import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import type { z } from 'zod';
import { readableConfigErrors, toConfigIssues } from '../connectors/errors.js';
import { InvalidCursorError, type Page } from '../store/paging.js';
import type { CursorSigner } from './cursors.js';
import {
  MalformedJsonError,
  PayloadTooLargeError,
  type RequestPart,
  RequestValidationError,
  UnsupportedMediaTypeError,
} from './errors.js';
import { jsonLimitViolations } from './json-limits.js';

/**
 * Reading a request: the body's size, type and JSON, and validation of every part against its
 * zod schema. Nothing here knows routes; failures are the API's own errors.
 */

/** Largest accepted request body. Source definitions are small; anything bigger is a mistake or abuse. */
export const MAX_BODY_BYTES = 64 * 1024;

/** A header by name, case-insensitively (API Gateway lowercases them; other callers may not). */
export function header(event: Pick<APIGatewayProxyEventV2, 'headers'>, name: string): string | undefined {
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(event.headers ?? {}))
    if (key.toLowerCase() === wanted) return value;
  return undefined;
}

/** True for `application/json` and `application/<anything>+json`, with or without parameters. */
export function isJsonContentType(contentType: string): boolean {
  const media = contentType.split(';')[0]!.trim().toLowerCase();
  return media === 'application/json' || /^application\/[a-z0-9.+-]+\+json$/.test(media);
}

/**
 * The request body as JSON, or undefined when there is none. Checks size first (413), then the
 * declared type (415), then the syntax (400), then the limits every body is held to (400:
 * valid Unicode, string and key lengths, nesting, no `__proto__`), so the cheapest refusal
 * comes first.
 */
export function readJsonBody(
  event: Pick<APIGatewayProxyEventV2, 'body' | 'isBase64Encoded' | 'headers'>,
): unknown {
  if (event.body === undefined || event.body === null || event.body === '') return undefined;
  const bytes = event.isBase64Encoded ? Buffer.from(event.body, 'base64') : Buffer.from(event.body, 'utf8');
  if (bytes.length > MAX_BODY_BYTES) throw new PayloadTooLargeError(MAX_BODY_BYTES);
  const contentType = header(event, 'content-type');
  if (!contentType || !isJsonContentType(contentType)) throw new UnsupportedMediaTypeError(contentType);
  let json: unknown;
  try {
    json = JSON.parse(bytes.toString('utf8'));
  } catch (error) {
    throw new MalformedJsonError(`the request body is not valid JSON: ${(error as Error).message}`);
  }
  const violations = jsonLimitViolations(json);
  if (violations.length > 0) throw new RequestValidationError('body', violations);
  return json;
}

/**
 * Validates one part of a request. Failures become a {@link RequestValidationError} with one
 * entry per field, at the field's dot path; unknown fields are named one by one.
 */
export function validate<S extends z.ZodType>(schema: S, value: unknown, part: RequestPart): z.output<S> {
  const result = schema.safeParse(value, { error: readableConfigErrors });
  if (result.success) return result.data;
  const errors = toConfigIssues(result.error.issues).map((issue) =>
    value === undefined && part === 'body' && issue.path === ''
      ? { path: '', message: 'a JSON body is required' }
      : issue,
  );
  throw new RequestValidationError(part, errors);
}

/** Path parameters decoded; a malformed percent-escape is a validation error, not a crash. */
export function decodePathParams(raw: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(raw)) {
    // IAM authorizes the path as sent: `/sources/%76ictim` would pass a deny on `/sources/victim`
    // and then be decoded to it. A source id has no character that needs encoding, so an encoded
    // one is refused rather than decoded.
    if (key === 'sourceId' && value.includes('%'))
      throw new RequestValidationError('path', [
        { path: key, message: 'must be written as is, without percent-encoding' },
      ]);
    try {
      out[key] = decodeURIComponent(value);
    } catch {
      throw new RequestValidationError('path', [{ path: key, message: 'is not a valid URL path segment' }]);
    }
  }
  return out;
}

/**
 * Runs a listing with a client-supplied cursor: the cursor's signature is checked for this
 * listing first (400 when altered, forged or from another listing), and the next page's cursor
 * is signed for it. A signed cursor that DynamoDB still refuses (a key from before a table
 * change) is the caller's to restart, answered 400, not a 500.
 *
 * @example
 * const page = await listPage(deps.cursors, `runs:${sourceId}`, query.cursor, (cursor) =>
 *   deps.runs.listBySource(sourceId, { limit: query.limit, cursor }));
 */
export async function listPage<T>(
  cursors: CursorSigner,
  listing: string,
  signed: string | undefined,
  list: (cursor: string | undefined) => Promise<Page<T>>,
): Promise<{ items: T[]; nextCursor: string | null }> {
  const cursor = await cursors.open(listing, signed);
  let page: Page<T>;
  try {
    page = await list(cursor);
  } catch (error) {
    if (cursor !== undefined && error instanceof Error && error.name === 'ValidationException') {
      throw new InvalidCursorError('the pagination cursor does not belong to this listing', { cause: error });
    }
    throw error;
  }
  return { items: page.items, nextCursor: await cursors.seal(listing, page.cursor) };
}
