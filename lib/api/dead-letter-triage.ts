import pLimit from 'p-limit';
import type { DeadLetterFilter, Discard } from '../store/dead-letters.js';
import { InvalidCursorError } from '../store/paging.js';
import type { ApiDeps } from './deps.js';

/**
 * Triage at volume: discarding every open dead letter of a source that matches a filter. One call
 * does bounded work — at most {@link BULK_DISCARD_PER_CALL} entries (a dry run counts up to
 * {@link BULK_COUNT_PER_CALL}) — and answers a signed cursor when more may match; the caller
 * follows it, so a source with thousands of entries is triaged in a handful of calls, each well
 * within API Gateway's 29 s.
 *
 * Each discard is a conditional write that re-checks what the read saw: the entry exists, is
 * open and still matches the filter. One discarded, resolved by a retry, or failed again
 * differently between the read and the write is skipped and counted as such, never overwritten.
 */

/** Most entries one bulk-discard call discards (conditional writes, {@link DISCARD_CONCURRENCY} at a time). */
export const BULK_DISCARD_PER_CALL = 200;
/** Most entries one dry run counts: reads only. */
export const BULK_COUNT_PER_CALL = 1_000;
/** Listing pages one call reads at most, so a sparse filter over a large table stays bounded too. */
const MAX_PAGES_PER_CALL = 10;
/** Entries asked for per listing page. */
const PAGE_SIZE = 100;
/** Conditional writes in flight at once. */
const DISCARD_CONCURRENCY = 8;

/** What one call did: entries it found matching, discarded and skipped, and where to go on. */
export interface BulkDiscardOutcome {
  readonly matched: number;
  readonly discarded: number;
  readonly skipped: number;
  /** Signed; null when the filter has no more entries to visit. */
  readonly nextCursor: string | null;
}

/** The listing a bulk-discard cursor is bound to: the source, the filter and whether it counts only. */
function listingOf(sourceId: string, filter: DeadLetterFilter, dryRun: boolean): string {
  return `dead-letter-discard:${JSON.stringify([sourceId, filter.runId ?? null, filter.errorClass ?? null, filter.reasonMatch ?? null, dryRun])}`;
}

/**
 * One call of a bulk discard from `cursor` (a previous call's `nextCursor`): discards the open
 * entries matching `filter` with `discard` (who, when, why), or with `discard` absent only counts
 * them (a dry run).
 */
export async function discardMatching(
  deps: Pick<ApiDeps, 'deadLetters' | 'cursors'>,
  sourceId: string,
  filter: DeadLetterFilter,
  options: { readonly discard?: Discard; readonly cursor?: string },
): Promise<BulkDiscardOutcome> {
  const { discard } = options;
  const listing = listingOf(sourceId, filter, discard === undefined);
  const budget = discard ? BULK_DISCARD_PER_CALL : BULK_COUNT_PER_CALL;
  const limit = pLimit(DISCARD_CONCURRENCY);
  let cursor = await deps.cursors.open(listing, options.cursor);
  let matched = 0;
  let discarded = 0;
  for (let pages = 0; pages < MAX_PAGES_PER_CALL && matched < budget; pages++) {
    const page = await listOpen(deps, sourceId, filter, cursor, Math.min(PAGE_SIZE, budget - matched));
    matched += page.items.length;
    if (discard) {
      const written = await Promise.all(
        page.items.map((entry) =>
          limit(() => deps.deadLetters.discardIfMatching(sourceId, entry.entryId, filter, discard)),
        ),
      );
      discarded += written.filter(Boolean).length;
    }
    cursor = page.cursor;
    if (cursor === undefined) break;
  }
  return {
    matched,
    discarded,
    skipped: discard ? matched - discarded : 0,
    nextCursor: await deps.cursors.seal(listing, cursor),
  };
}

async function listOpen(
  deps: Pick<ApiDeps, 'deadLetters'>,
  sourceId: string,
  filter: DeadLetterFilter,
  cursor: string | undefined,
  limit: number,
) {
  try {
    return await deps.deadLetters.list(sourceId, { ...filter, limit, cursor: cursor ?? null, state: 'open' });
  } catch (error) {
    // A signed cursor DynamoDB still refuses (a key from before a table change): restart, a 400.
    if (cursor !== undefined && error instanceof Error && error.name === 'ValidationException')
      throw new InvalidCursorError('the pagination cursor does not belong to this listing', { cause: error });
    throw error;
  }
}
