import type { ListedKey } from './listed-key.js';

/**
 * Members of a tie group that a listing by position serves twice (see `./keyset.ts`).
 *
 * Inside a tie group larger than a page, a run follows the source's own continuation. When that
 * continuation is a page number and the source changes its page size meanwhile (GitHub caps
 * `per_page` silently; search services lower their page size under load), page `n` addresses
 * other rows than before: after pages of four, page 4 at one row a page is the fourth row, which
 * page 1 already served. A position cannot list every id it delivered in a group of thousands
 * (it travels on a queue message), but most sources list the members of a tie in id order — the
 * primary key breaks the tie, as a database `ORDER BY updated_at, id` or a stable sort over rows
 * kept in id order does. So when the group's first page lists its members in ascending id order,
 * the stretch keeps the greatest id it listed, and a later page's member at or below it is one
 * served again: skipped, and left out of the stretch's tally.
 *
 * A member that joins the group behind the position (edited within the group's second, where
 * times are whole seconds) is skipped too, but it was never tallied: the stretch's second listing
 * (`./tie-check.ts`) serves it, the tallies differ, and the watermark stays at the group, so the
 * next run reads it. A source whose first page of the group is not in id order gets no skipping.
 * One whose first page only happened to be in order has members skipped wrongly: its listings
 * then differ, and the run reads the group once more, delivering the members listed out of order
 * (`reread` in `./keyset.ts`), so no member is skipped for good.
 */

/** Ids longer than this are not kept in a position for ordering (it must stay small). */
const MAX_ORDERED_ID = 64;

const NUMERIC = /^(0|[1-9]\d*)$/;

/**
 * Orders ids as a source breaking ties by its key would: decimal numbers (GitHub's issue
 * numbers) by value, anything else by its characters.
 */
export function compareIds(a: string, b: string): number {
  if (NUMERIC.test(a) && NUMERIC.test(b) && a.length !== b.length) return a.length - b.length;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** What a page of a stretch means for its members' order. */
export interface TieOrder {
  /** Per listed record: a member at `at` served again (at or below the greatest id listed). */
  readonly again: readonly boolean[];
  /** The greatest member id listed so far, when the members came in ascending id order. */
  readonly last: string | undefined;
}

/**
 * The order of one page of a stretch at `at`. On the group's first page (`last` undefined and
 * `opening`), the order is established: at least two members, strictly ascending. On later pages,
 * members at or below `last` are served again.
 */
export function tieOrder(
  keys: readonly ListedKey[],
  at: string,
  last: string | undefined,
  opening: boolean,
): TieOrder {
  const members = keys.map((key) => (key.ok && key.at === at ? key.id : null));
  if (opening) {
    const ids = members.filter((id): id is string => id !== null);
    const ascending = ids.every((id, i) => i === 0 || compareIds(ids[i - 1]!, id) < 0);
    const greatest = ids.at(-1);
    const ordered = ids.length >= 2 && ascending && greatest!.length <= MAX_ORDERED_ID;
    return { again: members.map(() => false), last: ordered ? greatest : undefined };
  }
  if (last === undefined) return { again: members.map(() => false), last };
  let greatest = last;
  const again = members.map((id) => {
    if (id === null) return false;
    if (compareIds(id, greatest) <= 0) return true;
    greatest = id;
    return false;
  });
  return { again, last: greatest.length <= MAX_ORDERED_ID ? greatest : undefined };
}
