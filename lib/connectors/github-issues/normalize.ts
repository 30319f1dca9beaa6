import type { Normalized } from '../contract.js';
import { isRecord, toIsoTimestamp } from '../values.js';

/**
 * Turns one GitHub issue (or pull request) from the REST API into an entity.
 *
 * The entity id is the issue number (unique within a repository and stable across renames of
 * the title); the version is `updated_at` as ISO UTC with milliseconds, so versions order as strings.
 */

function strings(value: unknown, key: 'name' | 'login'): string[] {
  if (!Array.isArray(value)) return [];
  return value
    .map((entry) => (typeof entry === 'string' ? entry : isRecord(entry) ? entry[key] : undefined))
    .filter((entry): entry is string => typeof entry === 'string');
}

function stringOrNull(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

/** True for a pull request returned by the issues endpoint (GitHub marks them with a `pull_request` object). */
export function isPullRequest(raw: unknown): boolean {
  return isRecord(raw) && isRecord(raw.pull_request);
}

/**
 * The fields worth keeping. Nested objects are flattened to what a reader needs (a login, label
 * names) rather than GitHub's full user and label objects, which are mostly URLs. The body is
 * kept whole: oversized items are rejected by the loader, with a reason, not silently truncated here.
 */
function issueData(raw: Record<string, unknown>, number: number, version: string): Record<string, unknown> {
  const user = isRecord(raw.user) ? stringOrNull(raw.user.login) : null;
  return {
    number,
    title: stringOrNull(raw.title),
    state: stringOrNull(raw.state),
    state_reason: stringOrNull(raw.state_reason),
    user,
    labels: strings(raw.labels, 'name'),
    assignees: strings(raw.assignees, 'login'),
    comments: typeof raw.comments === 'number' ? raw.comments : null,
    created_at: stringOrNull(raw.created_at),
    updated_at: version,
    closed_at: stringOrNull(raw.closed_at),
    html_url: stringOrNull(raw.html_url),
    body: stringOrNull(raw.body),
    is_pull_request: isPullRequest(raw),
  };
}

/**
 * Normalizes a raw GitHub issue.
 *
 * @returns `{ ok: false }` with a precise reason when `number` or `updated_at` is missing or invalid;
 *   `ref` is the issue number when it could be read, so the dead letter can be retried by id.
 */
export function normalizeIssue(raw: unknown): Normalized {
  if (!isRecord(raw)) return { ok: false, reason: 'record is not an object', ref: null };
  const { number } = raw;
  if (number === undefined || number === null) {
    return { ok: false, reason: 'field `number` is missing', ref: null };
  }
  if (typeof number !== 'number' || !Number.isSafeInteger(number) || number < 1) {
    return { ok: false, reason: 'field `number` is not a positive integer', ref: null };
  }
  const ref = String(number);
  if (raw.updated_at === undefined || raw.updated_at === null) {
    return { ok: false, reason: 'field `updated_at` is missing', ref };
  }
  const version = toIsoTimestamp(raw.updated_at);
  if (version === undefined) return { ok: false, reason: 'field `updated_at` is not a valid timestamp', ref };
  return { ok: true, entity: { id: ref, version, data: issueData(raw, number, version) } };
}
