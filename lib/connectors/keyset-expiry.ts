import { SourceHttpError } from '../retry/errors.js';
import type { KeysetPosition, KeysetStep } from './keyset-position.js';
import { capped, earlier } from './keyset-stretch.js';

/*
 * Source continuations that expire. Inside a stretch read by position (a tie group larger than a
 * page, or empty pages the source says more follows; see ./keyset.ts) a keyed stream follows the
 * source's own token, and tokens do not last: Elasticsearch's scroll ids die after their
 * keep-alive (404, `search_context_missing_exception`), Salesforce's query locators after 15
 * minutes idle (400, `INVALID_QUERY_LOCATOR`), Google's page tokens after a while (400,
 * "invalid page token"), and a cache of continuations evicts them (410 Gone). A run that waited
 * (a rate-limit deferral, a crash and the reaper's resume) comes back to a dead token.
 *
 * The run's own key still says where it is: in the `since=at` listing, the stretch has served its
 * tally's count of records. So it lists `since=at` again, passes that many records over by
 * position, and follows the new listing's token from there. Passing over by position is what
 * following a token did anyway; if the group changed meanwhile (a member edited away), the skip
 * lands one off, and the stretch's second listing at its end (./tie-check.ts) sees the difference
 * and holds the watermark at the group, so the next incremental run reads it again.
 *
 * A stretch restarts again only after it moved past where it last restarted, so a source whose
 * tokens die faster than the run can pass over the group fails the page, as before, instead of
 * listing the group forever. A token of the stretch's second listing (the check) or of a group's
 * re-reading that expires ends that listing with the watermark held at the group: nothing is
 * lost, the next run reads it again.
 */

/** The statuses a source answers an expired or evicted continuation with. */
const EXPIRED_STATUSES = new Set([400, 404, 410, 422]);

/** What to do about a continuation the source refused. */
export type Expiry =
  /** List again from `position` (its `follow` is gone: the `since=at` listing's first page). */
  | { readonly restart: KeysetPosition }
  /** Nothing to list: the stream goes on at `step.next` (a page that delivers nothing). */
  | { readonly step: KeysetStep };

/**
 * How a stream goes on when the source refused `position`'s continuation with `error`; null when
 * the error is not an expired continuation, or the stream cannot go on without the token (the
 * page fails, as any other).
 */
export function expiredFollow(position: KeysetPosition, error: unknown): Expiry | null {
  if (position.follow === undefined) return null;
  if (!(error instanceof SourceHttpError) || !EXPIRED_STATUSES.has(error.status)) return null;
  if (position.check !== undefined) {
    const ceiling = earlier(position.ceiling, position.at ?? undefined) ?? null;
    return { step: { deliver: [], ...capped(position.check.resume, ceiling) } };
  }
  if (position.reread !== undefined) {
    const ceiling = earlier(position.ceiling, position.at ?? undefined) ?? null;
    return { step: { deliver: [], ...capped(position.reread.resume, ceiling) } };
  }
  const { stretch } = position;
  // Without a tally of what the stretch served (a record without a version, members skipped as
  // served again), there is no count to pass over.
  if (stretch === undefined || stretch.tally.broken === true || stretch.skipped === true) return null;
  const { count } = stretch.tally;
  if (position.restart !== undefined && count <= position.restart.count) return null;
  const { follow: _expired, ...rest } = position;
  return { restart: { ...rest, restart: { count, skip: count } } };
}
