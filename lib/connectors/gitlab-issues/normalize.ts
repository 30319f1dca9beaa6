import type { Normalized } from '../contract.js';
import { isRecord, toIsoTimestamp } from '../values.js';

/**
 * Turns one GitLab issue from the REST API v4 into an entity. The id is the `iid` (the number
 * shown in the project, unique within it and what item URLs use); the version is `updated_at`
 * as ISO UTC with milliseconds (GitLab already sends milliseconds).
 */

function stringOrNull(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

function usernames(value: unknown): string[] {
  if (!Array.isArray(value)) return [];
  return value
    .map((user) => (isRecord(user) ? user.username : undefined))
    .filter((name): name is string => typeof name === 'string');
}

function issueData(raw: Record<string, unknown>, iid: number, version: string): Record<string, unknown> {
  return {
    iid,
    id: typeof raw.id === 'number' ? raw.id : null,
    project_id: typeof raw.project_id === 'number' ? raw.project_id : null,
    title: stringOrNull(raw.title),
    state: stringOrNull(raw.state),
    author: isRecord(raw.author) ? stringOrNull(raw.author.username) : null,
    assignees: usernames(raw.assignees),
    labels: Array.isArray(raw.labels) ? raw.labels.filter((l): l is string => typeof l === 'string') : [],
    milestone: isRecord(raw.milestone) ? stringOrNull(raw.milestone.title) : null,
    confidential: raw.confidential === true,
    user_notes_count: typeof raw.user_notes_count === 'number' ? raw.user_notes_count : null,
    created_at: stringOrNull(raw.created_at),
    updated_at: version,
    closed_at: stringOrNull(raw.closed_at),
    web_url: stringOrNull(raw.web_url),
    description: stringOrNull(raw.description),
  };
}

/**
 * Normalizes a raw GitLab issue.
 *
 * @returns `{ ok: false }` with a precise reason when `iid` or `updated_at` is missing or invalid;
 *   `ref` is the iid when it could be read, so the dead letter can be retried by id.
 */
export function normalizeGitlabIssue(raw: unknown): Normalized {
  if (!isRecord(raw)) return { ok: false, reason: 'record is not an object', ref: null };
  const { iid } = raw;
  if (iid === undefined || iid === null) return { ok: false, reason: 'field `iid` is missing', ref: null };
  if (typeof iid !== 'number' || !Number.isSafeInteger(iid) || iid < 1) {
    return { ok: false, reason: 'field `iid` is not a positive integer', ref: null };
  }
  const ref = String(iid);
  if (raw.updated_at === undefined || raw.updated_at === null) {
    return { ok: false, reason: 'field `updated_at` is missing', ref };
  }
  const version = toIsoTimestamp(raw.updated_at);
  if (version === undefined) return { ok: false, reason: 'field `updated_at` is not a valid timestamp', ref };
  return { ok: true, entity: { id: ref, version, data: issueData(raw, iid, version) } };
}
