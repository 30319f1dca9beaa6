import type { WindowPlan, WindowRequest } from './contract.js';
import type { ListedKey } from './keyset.js';
import { atPrecision, type SincePrecision } from './source-timing.js';

/**
 * Planning the windows of a partitioned run (see `Connector.planWindows`), shared by every
 * connector with a keyset position: the connector only says how to read its listing, this module
 * decides where to cut it.
 *
 * Windows are chosen from the data, not guessed evenly over time: a repository's issues bunch up
 * around releases, so equal spans of time would give one partition most of the work. Two ways to
 * find where the listing's quantiles are:
 *
 * - **by position** ({@link planByPosition}), for sources that read any position of the
 *   modification-ordered listing with a page of one entity (GitHub `per_page=1&page=p`, GitLab,
 *   page-numbered rest-json): one read for the first entity and the count, then k − 1 reads, in
 *   parallel, at positions ⌈j·N/k⌉. Positions shift while the source is edited, so the windows are
 *   only roughly even; correctness never depends on them, since each window is read by keyset.
 * - **by count** ({@link planByCount}), for sources that tell how many entities a `since` listing
 *   holds but cannot jump to a position (cursor-paginated rest-json with `totalPath`): each
 *   boundary is bisected over time until the count of entities at or after it is close enough to
 *   its share.
 *
 * Both return boundaries strictly after the listing's first entity and strictly increasing (equal
 * quantiles — a tie group wider than a window — collapse into one), and fewer windows, or none,
 * when the listing holds fewer than `maxWindows × minEntitiesPerWindow` entities. Boundaries are
 * times the source's `since` filter can express (`precision`): a window starting at 10:00:00.500
 * asked of a filter that reads whole seconds would list the previous window's last records again.
 */

/** What one read of a listing at a position found. */
export interface PositionRead {
  /** The entity at the position (its key, through the connector's normalization); null: past the end. */
  readonly key: ListedKey | null;
  /** Entities in the whole listing, when the source tells with this answer; else null. */
  readonly total: number | null;
}

/** Reads the entity at a 0-based position of the listing from `since`, with a page of one. */
export type PositionReader = (index: number) => Promise<PositionRead>;

/** What one count of a `since` listing found. */
export interface CountRead {
  /** Entities modified at or after `since`; null when the source did not say. */
  readonly total: number | null;
  /** The listing's first entity; null when it is empty. */
  readonly first: ListedKey | null;
}

/** Counts the entities modified at or after `since` (null: all of them). */
export type CountReader = (since: string | null) => Promise<CountRead>;

/** Reads per quantile at most: the position and its next neighbours, while they do not normalize. */
export const QUANTILE_READS = 3;

/** Steps of one boundary's bisection at most: millisecond precision over more than 30 years. */
export const MAX_BISECTION_STEPS = 40;

/** A plan that does not split: the listing is too small, empty, or cannot be measured. */
export function noWindows(total: number | null, requests: number): WindowPlan {
  return { boundaries: [], total, requests };
}

/** How many windows a listing of `total` entities gets: at most `maxWindows`, each ≥ the minimum. */
export function windowCount(total: number, request: WindowRequest): number {
  const min = Math.max(1, request.minEntitiesPerWindow);
  return Math.max(1, Math.min(Math.floor(request.maxWindows), Math.floor(total / min)));
}

/**
 * The boundaries that may be used: valid times strictly after the first entity (an earlier one
 * would make an empty first window), ascending, each once.
 */
export function cleanBoundaries(
  candidates: readonly (string | null)[],
  first: string | null,
  precision?: SincePrecision,
): string[] {
  const usable = candidates
    .map((b) => (b === null ? null : atPrecision(b, precision)))
    .filter((b): b is string => b !== null && (first === null || b > first));
  return [...new Set(usable)].sort();
}

function keyTime(key: ListedKey | null): string | null {
  return key?.ok ? key.at : null;
}

/**
 * Windows from positional reads: the count (from the first read, else by probing for the end of
 * the listing), then the times at the k − 1 quantile positions, read in parallel.
 *
 * @param options.countAbove - the source stops counting above this many entities (GitLab: 10,000):
 *   when the first read has no total, the end is searched from there rather than from 1.
 * @param options.precision - the finest time the source's `since` tells apart (boundaries are cut to it).
 */
export async function planByPosition(
  read: PositionReader,
  request: WindowRequest,
  options: { countAbove?: number; precision?: SincePrecision } = {},
): Promise<WindowPlan> {
  let requests = 1;
  const start = await read(0);
  if (start.key === null) return noWindows(0, requests);
  let total = start.total;
  if (total === null) {
    const counted = await countByProbing(read, options.countAbove ?? 1);
    requests += counted.requests;
    total = counted.total;
  }
  const k = windowCount(total, request);
  if (k < 2) return noWindows(total, requests);
  const positions = Array.from({ length: k - 1 }, (_, j) => Math.ceil(((j + 1) * total) / k));
  // A record that does not normalize has no time to cut at: its next neighbours are read instead.
  const timeNear = async (index: number): Promise<string | null> => {
    for (let offset = 0; offset < QUANTILE_READS; offset++) {
      requests += 1;
      const { key } = await read(index + offset);
      if (key === null || key.ok) return keyTime(key);
    }
    return null;
  };
  const found = await Promise.all(positions.map(timeNear));
  return { boundaries: cleanBoundaries(found, keyTime(start.key), options.precision), total, requests };
}

/**
 * The length of a listing that does not say it, by reads of one entity: doubling from `floor`
 * until a position is empty, then bisecting between the last full and the first empty position.
 */
async function countByProbing(
  read: PositionReader,
  floor: number,
): Promise<{ total: number; requests: number }> {
  let requests = 0;
  const exists = async (index: number) => {
    requests += 1;
    return (await read(index)).key !== null;
  };
  let full = 0;
  let empty = Math.max(1, floor);
  while (await exists(empty)) {
    full = empty;
    empty *= 2;
    if (empty > Number.MAX_SAFE_INTEGER / 2) break;
  }
  while (empty - full > 1) {
    const mid = Math.floor((full + empty) / 2);
    if (await exists(mid)) full = mid;
    else empty = mid;
  }
  return { total: full + 1, requests };
}

/**
 * Windows from counts of `since` listings: the count and first entity of the run's listing, then
 * each boundary bisected over time (in parallel) until the entities at or after it are within a
 * quarter window of its share. Times are ISO 8601 UTC with milliseconds, the connectors' version
 * format.
 *
 * @param options.now - the upper end of the search (epoch ms): no entity is modified after it.
 * @param options.precision - the finest time the source's `since` tells apart: `'s'` bisects over
 *   whole seconds, so every count is of a listing the source can express.
 */
export async function planByCount(
  count: CountReader,
  since: string | null,
  request: WindowRequest,
  options: { now: number; precision?: SincePrecision },
): Promise<WindowPlan> {
  let requests = 1;
  const start = await count(since);
  const first = keyTime(start.first);
  if (start.total === null || start.first === null) return noWindows(start.total, requests);
  const total = start.total;
  const k = windowCount(total, request);
  const lowMs = Date.parse(first ?? since ?? '');
  if (k < 2 || Number.isNaN(lowMs)) return noWindows(total, requests);
  // The search runs over units of the source's precision: every time it asks is one it can express.
  const unit = options.precision === 's' ? 1_000 : 1;
  const lowUnits = Math.floor(lowMs / unit);
  const highUnits = Math.max(Math.ceil(options.now / unit), lowUnits + 1);
  const at = (units: number) => new Date(units * unit).toISOString();
  const tolerance = Math.floor(total / (4 * k));

  const bisect = async (target: number): Promise<string | null> => {
    let low = lowUnits; // at or after `low`: more than `target` entities
    let high = highUnits; // at or after `high`: `target` or fewer (the search's assumption)
    for (let step = 0; step < MAX_BISECTION_STEPS && high - low > 1; step++) {
      const mid = Math.floor((low + high) / 2);
      requests += 1;
      const found = (await count(at(mid))).total;
      if (found === null) return null;
      if (Math.abs(found - target) <= tolerance) return at(mid);
      if (found > target) low = mid;
      else high = mid;
    }
    return high === highUnits ? null : at(high);
  };
  const targets = Array.from({ length: k - 1 }, (_, j) => total - Math.ceil(((j + 1) * total) / k));
  const found = await Promise.all(targets.map(bisect));
  return { boundaries: cleanBoundaries(found, first, options.precision), total, requests };
}

/**
 * The `remaining` estimate of a page of a partition: a source's count runs to the end of its
 * listing, past the window's end, so a bounded position knows only the page that ends the window
 * (then exactly what it delivered). Unbounded positions keep the connector's own estimate.
 */
export function windowedRemaining(
  position: { readonly until?: string },
  step: { readonly next: unknown },
  delivered: number,
  estimate: () => number | null,
): number | null {
  if (position.until === undefined) return estimate();
  return step.next === null ? delivered : null;
}
