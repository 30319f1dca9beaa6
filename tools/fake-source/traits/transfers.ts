import type { RouteContext } from '../http.js';
import type { FakeEntity } from '../model.js';
import type { Moved } from './state.js';

/**
 * Transferred records, answered by redirect. GitHub answers the API URL of an issue transferred
 * to another repository with `301 Moved Permanently` to the issue in its new repository, where it
 * has a new number — a number the old repository may use for another issue. Jira answers the old
 * key of an issue moved to another project with the issue under its new key. Either way the record
 * a client gets back is not the one it asked for, and the old one is gone from this source.
 *
 * The fake serves the new place itself: `/repos/{owner}/{repo}-transferred/issues/{number}` for
 * the GitHub shape, `/records/{id}-moved` for rest-json. (GitLab's moved issues answer the closed
 * original with `moved_to_id` instead; the GitLab shape treats a transfer as a deletion.)
 */

/** What a fetch by id meets when transfers are involved. */
export type MovedAnswer =
  | { readonly kind: 'redirect'; readonly location: string }
  | { readonly kind: 'serve'; readonly entity: FakeEntity; readonly moved: Moved };

/** Suffix of the repository a GitHub issue is transferred to. */
export const TRANSFERRED_REPO_SUFFIX = '-transferred';

/** A GitHub issue fetch (`ctx.params`: owner, repo, number) that meets a transfer; null otherwise. */
export function movedIssue(ctx: RouteContext): MovedAnswer | null {
  const { owner = 'o', repo = 'r' } = ctx.params;
  const number = Number(ctx.params.number);
  const { traits, store } = ctx.state;
  if (repo.endsWith(TRANSFERRED_REPO_SUFFIX)) {
    const found = traits.movedByNumber(number);
    return found ? { kind: 'serve', ...found } : null;
  }
  const entity = store.find(number);
  const moved = entity && traits.movedTo(entity);
  if (!moved) return null;
  const location = `${ctx.origin}/repos/${owner}/${repo}${TRANSFERRED_REPO_SUFFIX}/issues/${moved.number}`;
  return { kind: 'redirect', location };
}

/** A rest-json record fetch by `id` that meets a transfer; null otherwise. */
export function movedRecord(ctx: RouteContext, id: string): MovedAnswer | null {
  const { traits } = ctx.state;
  const found = traits.movedById(id);
  if (found) return { kind: 'serve', ...found };
  const entity = traits.resolve(id);
  const moved = entity && traits.movedTo(entity);
  if (!moved) return null;
  return { kind: 'redirect', location: `${ctx.origin}/records/${encodeURIComponent(moved.id)}` };
}
