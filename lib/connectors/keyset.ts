import { ClassifiedError } from '../retry/errors.js';
import { idSet } from '../run/compact-ids.js';
import type { Normalized } from './contract.js';
import { type KeysetPosition, type KeysetStep, START_OF_TIME } from './keyset-position.js';
import { checkStep, earlier, leaveStretch, rereadStep } from './keyset-stretch.js';
import type { ListedKey } from './listed-key.js';
import { type SinceBound, type SincePrecision, sinceFor } from './source-timing.js';
import { EMPTY_TALLY, tallyPage } from './tie-check.js';
import { tieOrder } from './tie-order.js';
import { unidentifiedRef } from './unidentified.js';

export { type Expiry, expiredFollow } from './keyset-expiry.js';
export {
  decodePosition,
  encodePosition,
  initialPosition,
  type KeysetPosition,
  type KeysetStep,
} from './keyset-position.js';
export type { ListedKey };

/**
 * Keyset positions for streams ordered by modification time.
 *
 * A listing sorted by `updatedAt` but paged by position (`page=N`, a `Link` URL with a page
 * number) is not stable: an entity edited mid-run jumps to the end, every entity behind it moves
 * one slot forward, and the one at the next page boundary is never served. So a run's position
 * is a key instead — the `updatedAt` of the last delivered entity plus the ids delivered at that
 * instant — and each page asks the source for entities modified at or after it (`since`,
 * inclusive), skipping the ones this run already delivered at the key. An edit can then only
 * move an entity ahead of the position, where the run reads it again.
 *
 * Ties: many entities can share one `updatedAt` (bulk edits, second-precision times), more than
 * a page holds. Asking `since=<key>` again would return the same page forever, so inside such a
 * tie group the position follows the source's own continuation of the `since=<key>` listing
 * (its next page number, cursor or URL) until the listing moves past the key; so it does across
 * pages the source answered empty while saying more follows. That stretch is positional again:
 * if a delivered member of the group is edited or deleted meanwhile, an undelivered member can
 * shift onto a page already read. So when the stretch ends, the run lists it once more and
 * compares what both listings served (`./tie-check.ts`): the same, and the stretch was read
 * whole; different, and the position records the stretch's start as a ceiling the run's
 * watermark never passes, so the next incremental run re-reads from there. A source that changes
 * its page size meanwhile makes page numbers serve members again; where the group lists in id
 * order, those are recognised and skipped (`./tie-order.ts`).
 *
 * Short pages: many APIs cut a page to its limit and then drop rows the caller may not see, so a
 * page shorter than the last, or empty, says nothing while the source's continuation (cursor,
 * next URL, `Link`, a total not reached) says more follows: the stream goes on. Only a stream
 * whose continuation is a guess (page numbers, no total) ends on a short page, after re-listing
 * from its last key once, or on an empty one — and not even then inside a window short of its
 * `until`, where the next window's records still follow: there a short re-listing only shows the
 * source cut its page size (GitHub caps `per_page` silently; search services shrink pages under
 * load), and only a page with nothing new ends it. The whole stream, or a run's open last window,
 * keeps the rule: records edited during the run, stamped at the source's clock (which may lag
 * ours), would otherwise keep it reading for as long as the source is edited.
 *
 * Windows: one partition of a partitioned run reads `[from, until)` of modification time. It
 * starts at the later of the run's `since` and `from`, and its stream ends at the first listed
 * record modified at or after `until` — the listing is sorted, so nothing after it belongs to the
 * window. A tie group at `until` is excluded whole (the next window starts `since=until` and reads
 * all of it), so every valid entity of a static listing falls in exactly one window. A record
 * that does not normalize has no time the run can read: the window delivers it when it is listed
 * before the record that ends the window. If its true time is at or after `until`, the next
 * window lists it too and dead-letters it again (the same entry); skipping it there instead could
 * lose it for good when the record that ended the window is edited away meanwhile.
 */

/**
 * The key of a raw record, through the connector's own normalization. A record that does not
 * normalize and has no readable id gets its content's ref (`./unidentified.ts`) when `raw` is given.
 */
export function listedKey(normalized: Normalized, raw?: unknown): ListedKey {
  if (normalized.ok) return { ok: true, id: normalized.entity.id, at: normalized.entity.version };
  return { ok: false, ref: normalized.ref ?? (raw === undefined ? null : unidentifiedRef(raw)) };
}

/** What a connector knows of the listing a page came from. */
export interface ListingOptions {
  /**
   * True when the source gives no continuation of its own and the connector guesses one (the
   * next page number, when the source sends neither a next link nor a total): then an empty
   * page ends the stream, and a short page ends it after one re-listing. Default false: the
   * source said more follows (a cursor, a next URL, a `Link`, a total not yet reached), and the
   * stream goes on through short and empty pages until it says otherwise — many APIs cut a page
   * to its limit and then drop the rows the caller may not see.
   */
  readonly guessed?: boolean;
  /**
   * The finest time the source's `since` filter tells apart. With `'s'` the page was asked from
   * the position's time cut to the second, and records listed between that and the position's
   * time come before the key in listing order: already delivered, skipped.
   */
  readonly precision?: SincePrecision;
  /**
   * With `'exclusive'`, the page was asked one precision unit before the position's time (see
   * `sinceFor`), and records listed before the key are skipped the same way.
   */
  readonly bound?: SinceBound;
}

/**
 * Advances a position over one page of the `since=position.at` listing (or of its continuation).
 * With a window bound (`position.until`), only the records listed before the first one modified
 * at or after it are delivered, and that record ends the stream.
 *
 * @param keys - the page's records in listing order (oldest update first).
 * @param sourceNext - the next page of this listing (page number, cursor, URL), null when the
 *   source says the listing ended.
 * @param continuation - whether `sourceNext` is the source's word or the connector's guess.
 * @throws ClassifiedError (permanent) when the page holds records older than the position: the
 *   source ignores the `since` filter or does not sort by modification time, and reading on would
 *   loop or skip silently.
 */
export function advance(
  position: KeysetPosition,
  keys: readonly ListedKey[],
  sourceNext: string | null,
  continuation: ListingOptions = {},
): KeysetStep {
  refuseUnsorted(position.at, keys, continuation);
  if (position.check !== undefined)
    return checkStep(position, position.check, keys, sourceNext, continuation.guessed === true);
  if (position.reread !== undefined)
    return rereadStep(position, position.reread, keys, sourceNext, continuation.guessed === true);
  if (position.restart !== undefined && position.restart.skip > 0)
    return passOver(position, position.restart, keys, sourceNext, continuation);
  const delivered = idSet([...position.ids, ...(position.before ?? [])]);
  const { at, until } = position;
  // Following a tie group: members a changed page size serves again, recognised by their order.
  const following = position.follow !== undefined && position.stretch !== undefined && at !== null;
  const order = following ? tieOrder(keys, at, position.stretch?.last, false) : undefined;
  const tallied = order === undefined ? keys : keys.filter((_, i) => !order.again[i]);
  const skipped = position.stretch?.skipped === true || order?.again.includes(true) === true;
  let bounded = false;
  const deliver = keys.map((key, index) => {
    if (bounded) return false;
    if (order?.again[index]) return false;
    if (key.ok && until !== undefined && key.at >= until) {
      bounded = true;
      return false;
    }
    if (at === null) return true;
    // Listed only because the source reads `since` at a coarser precision: before the key.
    if (key.ok && key.at < at) return false;
    if (key.ok) return !(key.at === at && delivered.has(key.id));
    return key.ref === null || !delivered.has(key.ref);
  });
  const ceiling = position.ceiling ?? null;
  const guessed = continuation.guessed === true;
  const fresh = deliver.includes(true);
  // A short page inside a window short of its `until` is not the listing's end: the listing holds
  // at least the next window's records. The source cut its page size; read on. (Edits during the
  // run are stamped past every `until`, so they cannot keep a window reading forever.)
  const cut = position.full !== undefined && keys.length < position.full;
  const short = cut && !(fresh && until !== undefined);
  const guessedEnd = guessed && (keys.length === 0 || (position.recheck === true && (short || !fresh)));
  if (bounded || sourceNext === null || guessedEnd) {
    const left = leaveStretch(position, tallied, skipped, until ?? null, null);
    // A window that stops on a guess, short of its `until`, proved its listing only up to its key:
    // the run's watermark holds there, so the next incremental reads on from it.
    const proved = bounded || (sourceNext === null && !guessed);
    if (!proved && until !== undefined) {
      const key = at ?? START_OF_TIME;
      return { deliver, ...left, ceiling: left.ceiling !== null && left.ceiling < key ? left.ceiling : key };
    }
    return { deliver, ...left };
  }
  const recheck = guessed && cut ? { recheck: true as const } : {};
  const full = Math.max(position.full ?? 0, keys.length);
  const bound = until === undefined ? {} : { until };

  let last: string | null = null;
  for (const key of keys) {
    if (key.ok && (at === null || key.at >= at) && (last === null || key.at > last)) last = key.at;
  }

  if (last === null || last === at) {
    // The whole page is one tie group (or unkeyable): follow the source's own continuation.
    const tieAt = last ?? at;
    // Ids delivered at the key before the run began following the tie group by position: records
    // that do not normalize can push them past the first page of `since=at`, onto any page.
    const before =
      tieAt === null || tieAt !== at
        ? []
        : position.follow === undefined
          ? position.ids
          : (position.before ?? []);
    // What the stretch read by position served, from its first page (`since=at`) on, each member once.
    const greatest = following || tieAt === null ? order?.last : tieOrder(keys, tieAt, undefined, true).last;
    // An empty page at the very start of the stream: the stretch starts before any record.
    const from = tieAt ?? (keys.length === 0 ? START_OF_TIME : null);
    const stretch =
      from === null
        ? {}
        : {
            stretch: {
              from,
              tally: tallyPage(position.stretch?.tally ?? EMPTY_TALLY, tallied, null).tally,
              ...(greatest === undefined ? {} : { last: greatest }),
              ...(skipped ? { skipped: true as const } : {}),
            },
          };
    const next: KeysetPosition = {
      at: tieAt,
      ids: pageIdsAt(keys, tieAt),
      ...(before.length === 0 ? {} : { before: [...before] }),
      follow: sourceNext,
      full,
      ...(position.ceiling === undefined ? {} : { ceiling: position.ceiling }),
      ...(position.restart === undefined ? {} : { restart: position.restart }),
      ...bound,
      ...recheck,
      ...stretch,
    };
    return { deliver, next, ceiling };
  }
  const next: KeysetPosition = {
    at: last,
    ids: pageIdsAt(keys, last),
    full,
    ...(position.ceiling === undefined ? {} : { ceiling: position.ceiling }),
    ...bound,
    ...recheck,
  };
  return { deliver, ...leaveStretch(position, tallied, skipped, last, next) };
}

/**
 * A page of a stretch listed again after its continuation expired (`./keyset-expiry.ts`): the
 * first records, up to the count the stretch served, are passed over by position; a record past
 * the group's key was never served by the stretch (it ends the group), so passing over stops
 * there. What follows is read as the stretch's continuation.
 */
function passOver(
  position: KeysetPosition,
  restart: NonNullable<KeysetPosition['restart']>,
  keys: readonly ListedKey[],
  sourceNext: string | null,
  continuation: ListingOptions,
): KeysetStep {
  const { at } = position;
  const beyond = at === null ? -1 : keys.findIndex((key) => key.ok && key.at > at);
  const passed = Math.min(restart.skip, beyond === -1 ? keys.length : beyond);
  if (passed === keys.length) {
    const deliver = keys.map(() => false);
    if (sourceNext === null || (continuation.guessed === true && keys.length === 0)) {
      // The listing ended inside what the stretch had served: the group shrank meanwhile. The
      // stream is over; the watermark holds at the group, so the next run reads it again.
      return { deliver, next: null, ceiling: earlier(position.ceiling, position.stretch?.from) ?? null };
    }
    const next: KeysetPosition = {
      ...position,
      follow: sourceNext,
      restart: { count: restart.count, skip: restart.skip - passed },
    };
    return { deliver, next, ceiling: position.ceiling ?? null };
  }
  // Read on as the stretch's continuation (`follow` only marks the position as following).
  const following: KeysetPosition = {
    ...position,
    follow: position.follow ?? '',
    restart: { count: restart.count, skip: 0 },
  };
  const step = advance(following, keys.slice(passed), sourceNext, continuation);
  return { ...step, deliver: [...keys.slice(0, passed).map(() => false), ...step.deliver] };
}

function refuseUnsorted(at: string | null, keys: readonly ListedKey[], listing: ListingOptions): void {
  if (at === null) return;
  const asked = sinceFor(at, listing.precision, listing.bound);
  const older = keys.find((key) => key.ok && key.at < asked);
  if (older?.ok) {
    throw new ClassifiedError(
      'permanent',
      `the source listed a record modified at ${older.at} when asked for records since ${asked}: its listing is not filtered and ordered by modification time`,
    );
  }
}

/**
 * Ids of the page's records at `at`, plus the refs of invalid records listed after the last of
 * them: `since=at` lists those again, and they were delivered (dead-lettered) already.
 */
function pageIdsAt(keys: readonly ListedKey[], at: string | null): string[] {
  const ids: string[] = [];
  let trailing: string[] = [];
  for (const key of keys) {
    if (key.ok) {
      trailing = [];
      if (key.at === at) ids.push(key.id);
    } else if (key.ref !== null) {
      trailing.push(key.ref);
    }
  }
  return [...ids, ...trailing];
}
