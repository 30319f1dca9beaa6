/**
 * A source URL fit to store or show: what was asked of the source (host, path, paging and filter
 * parameters) without what proves who asked. Used wherever a request URL leaves the request —
 * an item's provenance, a log line — so a token passed as a query parameter never lands in a table.
 */

/** What replaces a credential. */
export const REDACTED = '<redacted>';

/**
 * Query parameter names that carry credentials: `access_token`, `api_key`, `apikey`, `private_token`
 * (GitLab), `client_secret`, `password`, `sig`/`signature`, `X-Amz-Credential` and
 * `X-Amz-Security-Token` (S3 presigned URLs), `code` (OAuth), `session`, `jwt`, `auth…`.
 */
const CREDENTIAL_NAME =
  /(token|secret|passw|pwd|api[-_]?key|^key$|[-_]key$|auth|credential|signature|^sig$|session|^code$|jwt|bearer|cookie)/i;

/** Values that are credentials whatever their parameter is called. */
const CREDENTIAL_VALUE = [
  /^(gh[pousr]_|github_pat_)\w+/, // GitHub tokens
  /^glpat-[\w-]+/, // GitLab personal access tokens
  /^eyJ[\w-]+\.[\w-]+\.[\w-]*$/, // JWTs
  /^xox[abprs]-[\w-]+/, // Slack tokens
  /^AKIA[0-9A-Z]{16}$/, // AWS access key ids
] as const;

/** True when a query parameter's name or value looks like a credential. */
export function isCredentialParameter(name: string, value: string): boolean {
  return CREDENTIAL_NAME.test(name) || CREDENTIAL_VALUE.some((shape) => shape.test(value));
}

/**
 * The URL with user info and credential-shaped query parameters replaced by `<redacted>` and the
 * fragment dropped; other parameters (pages, cursors, `since`) are kept, since they say which
 * slice of the source a record came from. Text that is not an absolute URL keeps only what
 * precedes its query string.
 *
 * @example
 * redactUrl('https://gitlab.example/api/v4/issues?page=2&private_token=glpat-x');
 * // 'https://gitlab.example/api/v4/issues?page=2&private_token=<redacted>'
 */
export function redactUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url.split(/[?#]/, 1)[0] ?? '';
  }
  if (parsed.username || parsed.password) {
    parsed.username = REDACTED;
    parsed.password = '';
  }
  parsed.hash = '';
  const query = parsed.search.slice(1);
  parsed.search = '';
  const kept = redactPairs(query);
  return kept.length > 0 ? `${parsed.toString()}?${kept}` : parsed.toString();
}

/**
 * A query string with credential-shaped values replaced; pairs are rewritten as sent (their
 * encoding kept), only a credential's value replaced, empty pairs dropped.
 */
function redactPairs(query: string): string {
  return query
    .split('&')
    .filter((pair) => pair.length > 0)
    .map((pair) => {
      const [rawName = '', rawValue = ''] = pair.split(/=(.*)/s, 2);
      const name = decodeParameter(rawName);
      return isCredentialParameter(name, decodeParameter(rawValue)) ? `${rawName}=${REDACTED}` : pair;
    })
    .join('&');
}

/** `ks1.` / `rw1.`: cursors the connectors wrap around the source's own (base64url JSON). */
const ENVELOPE = /^([a-z]+\d+\.)([\w-]+)$/;

/**
 * A stored cursor fit to show: what a run view, a dead letter or a log may print of a position.
 * The engine keeps the cursor as the source sent it (it must follow it); only what is shown is
 * redacted. A next-page URL loses the credential-shaped parameters the source put in it (a
 * presigned `X-Amz-Signature`, an `access_token`), a query string or relative URL likewise, a
 * cursor that is itself shaped like a token is replaced whole, and a cursor the connector wrapped
 * (`ks1.`, `rw1.`: base64url JSON) is unwrapped, redacted inside and wrapped again. Anything else
 * (page numbers, opaque tokens) is shown as it is.
 *
 * @example
 * redactCursor('https://api.example.com/items?page=2&access_token=abc');
 * // 'https://api.example.com/items?page=2&access_token=<redacted>'
 */
export function redactCursor(cursor: string): string {
  const envelope = ENVELOPE.exec(cursor);
  if (envelope) {
    const inner = redactEnvelope(envelope[2] ?? '');
    if (inner !== undefined) return `${envelope[1]}${inner}`;
  }
  if (/^https?:\/\//i.test(cursor)) return redactUrl(cursor);
  if (CREDENTIAL_VALUE.some((shape) => shape.test(cursor))) return REDACTED;
  const query = cursor.indexOf('?');
  if (query >= 0)
    return `${cursor.slice(0, query)}?${redactPairs(cursor.slice(query + 1).split('#')[0] ?? '')}`;
  return cursor.includes('=') ? redactPairs(cursor) : cursor;
}

/**
 * Free text (a dead letter's excerpt of a payload) with every absolute URL in it redacted as
 * {@link redactUrl} does, and every connector-wrapped cursor as {@link redactCursor} does; the
 * rest kept.
 */
export function redactUrlsIn(text: string): string {
  return text
    .replace(/https?:\/\/[^\s"'<>\\]+/gi, (url) => redactUrl(url))
    .replace(/\b[a-z]+\d+\.[\w-]{8,}/g, (wrapped) => redactCursor(wrapped));
}

/** The base64url JSON inside an envelope with its strings redacted; undefined if it is not JSON. */
function redactEnvelope(encoded: string): string | undefined {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(encoded, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (value === null || typeof value !== 'object') return undefined;
  const text = JSON.stringify(value);
  const redacted = JSON.stringify(redactStrings(value));
  return redacted === text ? encoded : Buffer.from(redacted).toString('base64url');
}

function redactStrings(value: unknown): unknown {
  if (typeof value === 'string') return redactCursor(value);
  if (Array.isArray(value)) return value.map(redactStrings);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, redactStrings(inner)]));
  }
  return value;
}

function decodeParameter(raw: string): string {
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' '));
  } catch {
    return raw;
  }
}
