import { EntityGoneError } from '../gone.js';
import { isRecord } from '../values.js';
import type { GitlabIssuesConfig } from './config.js';

/**
 * Whether GitLab's answer to "get issue iid N of project P" is that issue. GitLab keeps a moved
 * issue at its old iid (closed, with `moved_to_id`) rather than redirecting, but a proxy, a
 * redirect or a project id that now names another project can still answer with another
 * project's issue: its `project_id` (when the source names the project by id) or its
 * `references.full` (`group/project#iid`, when by path) tells. Another iid or another project
 * means the issue is gone from this source, never a record to store under any id of this one.
 */

/** The project part of `references.full` (`group/sub/project#7` → `group/sub/project`), lower-cased. */
function projectPathOf(references: unknown): string | null {
  if (!isRecord(references) || typeof references.full !== 'string') return null;
  const hash = references.full.lastIndexOf('#');
  return hash > 0 ? references.full.slice(0, hash).toLowerCase() : null;
}

/** Where the body says it lives, when it says so in the form the config names its project. */
function projectOf(config: GitlabIssuesConfig, body: Record<string, unknown>): string | null {
  if (/^\d+$/.test(config.project)) {
    return typeof body.project_id === 'number' ? String(body.project_id) : null;
  }
  return projectPathOf(body.references);
}

/**
 * Returns the body when it is issue `iid` of the configured project.
 *
 * @throws EntityGoneError naming where the answer came from, when it is another issue. A body
 *   without a readable iid or project is returned as is: normalization judges it.
 */
export function ensureAskedIssue(config: GitlabIssuesConfig, iid: string, body: unknown): unknown {
  if (!isRecord(body)) return body;
  const project = projectOf(config, body);
  const answeredIid = typeof body.iid === 'number' ? String(body.iid) : null;
  const otherProject = project !== null && project !== config.project.toLowerCase();
  const otherIid = answeredIid !== null && answeredIid !== iid;
  if (!otherProject && !otherIid) return body;
  const answered = `${project ?? config.project}#${answeredIid ?? '?'}`;
  throw new EntityGoneError(
    iid,
    `issue #${iid} is no longer in project ${config.project}: GitLab answered with ${answered}`,
  );
}
