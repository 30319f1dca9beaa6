import { hasStablePosition } from '../../connectors/contract.js';
import type { StepContext } from '../step/context.js';

/**
 * Cursors of reconciliation's tombstone pass (see `tombstone-pass.ts`): after the listing's last page,
 * the run's pages walk the source's stored keys, each page message carrying the key its slice
 * starts after. Kept apart from the pass itself so the page work can route to it without an
 * import circle.
 */

/** The prefix of every tombstone slice cursor. */
export const TOMBSTONE_SLICE = 'tombstones:';
const PREFIX = TOMBSTONE_SLICE;

/** True for the cursor of a tombstone slice (as opposed to a listing cursor). */
export function isTombstoneSlice(cursor: string | null): cursor is string {
  return cursor?.startsWith(PREFIX) ?? false;
}

/**
 * The cursor of the slice starting after `afterEntityId` (null: the first slice). `listedPages`:
 * how many pages the listing had, whose seen records the pass reads (null: a cursor of a version
 * that kept marks on the items instead).
 */
export function tombstoneSlice(afterEntityId: string | null, listedPages: number | null): string {
  const after = afterEntityId === null ? '' : encodeURIComponent(afterEntityId);
  // `|` is escaped by encodeURIComponent, so it cannot occur in the key part.
  return `${PREFIX}${after}${listedPages === null ? '' : `|${listedPages}`}`;
}

/** The key a slice cursor starts after (null: the first key). */
export function sliceStart(cursor: string): string | null {
  const rest = cursor.slice(PREFIX.length).split('|')[0]!;
  return rest === '' ? null : decodeURIComponent(rest);
}

/** How many pages the listing before the pass had (null: not recorded, see {@link tombstoneSlice}). */
export function listedPagesOf(cursor: string): number | null {
  const count = cursor.slice(PREFIX.length).split('|')[1];
  return count === undefined ? null : Number(count);
}

/**
 * Where a listing page leads: its own next cursor, or — at the end of a reconciliation listing
 * over a stable stream — the first tombstone slice. A reconciliation over a stream that is not
 * stable tombstones nothing, and says so.
 */
export function afterListingPage(context: StepContext, nextCursor: string | null): string | null {
  if (nextCursor !== null || context.run.mode !== 'reconciliation') return nextCursor;
  if (!hasStablePosition(context.connector.manifestFor(context.config))) {
    context.log.warn('reconciliation over a stream that is not stable: nothing tombstoned', {
      reason: 'a listing paged by position can miss live entities when the source changes mid-run',
    });
    return null;
  }
  return tombstoneSlice(null, context.message.page);
}
