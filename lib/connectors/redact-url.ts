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
  // Pairs are rewritten as sent (their encoding kept), only a credential's value replaced.
  const pairs = parsed.search
    .slice(1)
    .split('&')
    .filter((pair) => pair.length > 0)
    .map((pair) => {
      const [rawName = '', rawValue = ''] = pair.split(/=(.*)/s, 2);
      const name = decodeParameter(rawName);
      return isCredentialParameter(name, decodeParameter(rawValue)) ? `${rawName}=${REDACTED}` : pair;
    });
  parsed.search = '';
  return pairs.length > 0 ? `${parsed.toString()}?${pairs.join('&')}` : parsed.toString();
}

function decodeParameter(raw: string): string {
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' '));
  } catch {
    return raw;
  }
}
