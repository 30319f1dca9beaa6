import type { FetchedPage, TimeWindow } from '../../lib/connectors/contract.js';
import { pageWatermark } from '../../lib/engine/run/watermark.js';
import type { Subject } from './subjects.js';

/**
 * Reading a subject's stream as the engine would (cursor in, cursor out, `since` and, for a
 * partition, its window in the context): one stream to its end, or a partitioned run's windows
 * in turns.
 */

/** Pages a run may take before the test calls it a loop (the sources hold < 100 entities, 10 a page). */
export const MAX_PAGES = 60;

/** What one stream (or one window) delivered. */
export interface Delivered {
  readonly pages: FetchedPage[];
  /** Cursors the run was at: cursors[k] fetched pages[k]. */
  readonly cursors: (string | null)[];
  /** Valid entities delivered, in order: [id, version]. */
  readonly entities: [string, string][];
  /** The watermark the run justified, by the connector's rule. */
  readonly watermark: string | null;
  /** The lowest watermark ceiling any page reported (a tie group read by position); null: none. */
  readonly ceiling: string | null;
}

/** One stream read page by page. */
class StreamReader {
  readonly pages: FetchedPage[] = [];
  readonly cursors: (string | null)[] = [];
  readonly entities: [string, string][] = [];
  watermark: string | null;
  ceiling: string | null = null;
  done = false;

  constructor(
    private readonly s: Subject,
    private readonly since: string | null,
    private cursor: string | null,
    private readonly window?: TimeWindow,
  ) {
    this.watermark = since;
  }

  async step(): Promise<void> {
    if (this.pages.length >= MAX_PAGES) throw new Error(`${this.s.name}: no end after ${MAX_PAGES} pages`);
    const page = await this.s.connector.fetchPage(
      this.s.config,
      this.cursor,
      this.s.ctx(this.since, this.window),
    );
    this.pages.push(page);
    this.cursors.push(this.cursor);
    const versions: string[] = [];
    for (const raw of page.items) {
      const normalized = this.s.connector.normalize(this.s.config, raw);
      if (!normalized.ok) continue;
      this.entities.push([normalized.entity.id, normalized.entity.version]);
      versions.push(normalized.entity.version);
    }
    this.watermark =
      page.watermark !== undefined
        ? page.watermark
        : pageWatermark(this.watermark, versions, page.watermarkCeiling);
    const ceiling = page.watermarkCeiling ?? null;
    if (ceiling !== null && (this.ceiling === null || ceiling < this.ceiling)) this.ceiling = ceiling;
    if (page.nextCursor === null) this.done = true;
    else this.cursor = page.nextCursor;
  }

  result(): Delivered {
    const { pages, cursors, entities, watermark, ceiling } = this;
    return { pages, cursors, entities, watermark, ceiling };
  }
}

/** Runs the stream from `cursor` to its end, as the engine would, optionally editing between pages. */
export async function run(
  s: Subject,
  options: { since?: string | null; from?: string | null; edit?: boolean; window?: TimeWindow } = {},
): Promise<Delivered> {
  const reader = new StreamReader(s, options.since ?? null, options.from ?? null, options.window);
  for (let n = 0; ; n++) {
    await reader.step();
    if (reader.done) return reader.result();
    if (options.edit) await s.edit(n);
  }
}

/** Windows `[since, b1) [b1, b2) … [bk-1, ∞)` from a plan's boundaries. */
export function windowsOf(boundaries: readonly string[]): TimeWindow[] {
  const edges = [null, ...boundaries, null];
  return edges.slice(0, -1).map((from, i) => ({ from, until: edges[i + 1] ?? null }));
}

/** What a partitioned run delivered: each window's stream, and the run's watermark. */
export interface PartitionedDelivery {
  readonly windows: Delivered[];
  /** The latest version any window read, capped by the lowest ceiling of all windows. */
  readonly watermark: string | null;
}

/**
 * Reads the windows of a partitioned run in turns — one page of each window per round, as
 * concurrent partitions interleave — optionally editing the source after every round.
 */
export async function runWindows(
  s: Subject,
  boundaries: readonly string[],
  options: { since?: string | null; edit?: boolean } = {},
): Promise<PartitionedDelivery> {
  const since = options.since ?? null;
  const readers = windowsOf(boundaries).map((window) => new StreamReader(s, since, null, window));
  for (let round = 0; readers.some((r) => !r.done); round++) {
    for (const reader of readers) if (!reader.done) await reader.step();
    if (options.edit) await s.edit(round);
  }
  const windows = readers.map((r) => r.result());
  const versions = windows.flatMap((w) => w.entities.map(([, version]) => version));
  const ceilings = windows.map((w) => w.ceiling).filter((c): c is string => c !== null);
  const ceiling = ceilings.length === 0 ? null : ceilings.sort()[0]!;
  return { windows, watermark: pageWatermark(since, versions, ceiling) };
}

/** The latest version of each id across runs (loads never put an older version over a newer one). */
export function latest(...runs: Pick<Delivered, 'entities'>[]): Map<string, string> {
  const stored = new Map<string, string>();
  for (const r of runs)
    for (const [id, version] of r.entities) {
      const seen = stored.get(id);
      if (seen === undefined || seen < version) stored.set(id, version);
    }
  return stored;
}
