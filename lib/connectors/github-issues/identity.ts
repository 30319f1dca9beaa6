import { EntityGoneError } from '../gone.js';
import { isRecord } from '../values.js';
import type { GithubIssuesConfig } from './config.js';

/**
 * Whether GitHub's answer to "get issue N of owner/repo" is that issue. GitHub answers a
 * transferred issue with `301 Moved Permanently` to `/repositories/{id}/issues/{number}`: the issue
 * it became in another repository, usually under another number ("Get an issue" in GitHub's REST
 * documentation). The redirect is followed like any same-origin one, so the answer is checked
 * here: another number or another repository (`repository_url`) means the issue is gone from
 * this source, never a record to store under any id of this one.
 */

/** `owner/repo` from `…/repos/{owner}/{repo}` (GitHub's `repository_url`), lower-cased; null if unreadable. */
function repositoryOf(repositoryUrl: unknown): string | null {
  if (typeof repositoryUrl !== 'string') return null;
  const match = /\/repos\/([^/]+)\/([^/]+)\/?$/.exec(repositoryUrl);
  if (!match) return null;
  return `${decodeURIComponent(match[1]!)}/${decodeURIComponent(match[2]!)}`.toLowerCase();
}

/**
 * Returns the body when it is issue `id` of the configured repository.
 *
 * @throws EntityGoneError naming where the answer came from, when it is another issue. A body
 *   without a readable number or repository is returned as is: normalization judges it.
 */
export function ensureAskedIssue(config: GithubIssuesConfig, id: string, body: unknown): unknown {
  if (!isRecord(body)) return body;
  const asked = `${config.owner}/${config.repo}`;
  const repository = repositoryOf(body.repository_url);
  const number = typeof body.number === 'number' ? String(body.number) : null;
  const otherRepository = repository !== null && repository !== asked.toLowerCase();
  const otherNumber = number !== null && number !== id;
  if (!otherRepository && !otherNumber) return body;
  const answered = `${repository ?? asked}#${number ?? '?'}`;
  const why = otherRepository ? 'transferred to another repository' : 'another issue';
  throw new EntityGoneError(
    id,
    `issue #${id} is no longer in ${asked}: GitHub answered with ${answered} (${why})`,
  );
}
