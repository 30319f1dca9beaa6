/** An item as DynamoDB's wire format holds it: attribute name to attribute value. */
export type Image = Record<string, unknown>;

/** One write of an item: when it landed, and what the item was before it (undefined: absent). */
export interface EarlierState {
  readonly at: number;
  readonly image: Image | undefined;
}

/** Writes are forgotten this long after they landed, whatever window reads lag by. */
const KEEP_MS = 60_000;

/**
 * The recent writes of items, by item identity, so a lagging read can answer with what an item
 * was a moment ago: the state before the earliest write after that moment. Entries older than a
 * minute are dropped as writes come in, so the history stays as small as the recent writes.
 */
export class StaleHistory {
  private readonly writes = new Map<string, EarlierState[]>();
  private oldest = Number.POSITIVE_INFINITY;
  private newest = Number.NEGATIVE_INFINITY;

  /** Notes that the item `id` was written at `at`, having been `image` before. */
  record(id: string, at: number, image: Image | undefined): void {
    const list = this.writes.get(id) ?? [];
    list.push({ at, image });
    this.writes.set(id, list);
    this.oldest = Math.min(this.oldest, at);
    this.newest = Math.max(this.newest, at);
    if (at - this.oldest > KEEP_MS) this.prune(at - KEEP_MS);
  }

  /** The item's state before its earliest write after `since`, or undefined if it was not written since. */
  before(id: string, since: number): EarlierState | undefined {
    return this.writes.get(id)?.find((w) => w.at > since);
  }

  /** The ids of the items written since `since`, each with its state before its earliest write since. */
  *writtenSince(since: number): Generator<[string, EarlierState]> {
    for (const id of this.writes.keys()) {
      const earlier = this.before(id, since);
      if (earlier) yield [id, earlier];
    }
  }

  /** True when nothing was written in the last `windowMs`: no read can lag. */
  empty(now: number, windowMs: number): boolean {
    return this.writes.size === 0 || now - windowMs > this.newest;
  }

  private prune(before: number): void {
    this.oldest = Number.POSITIVE_INFINITY;
    for (const [id, list] of this.writes) {
      const kept = list.filter((w) => w.at >= before);
      if (kept.length === 0) this.writes.delete(id);
      else {
        this.writes.set(id, kept);
        this.oldest = Math.min(this.oldest, kept[0]!.at);
      }
    }
  }
}

/**
 * The part of `image` a read's `ProjectionExpression` asks for, by top-level attribute (a nested
 * path keeps its whole top-level attribute, which is more than DynamoDB returns, never less).
 */
export function projectImage(image: Image, request: Record<string, unknown>): Image {
  const projection = request.ProjectionExpression as string | undefined;
  if (!projection) return image;
  const names = (request.ExpressionAttributeNames ?? {}) as Record<string, string>;
  const wanted = new Set(
    projection.split(',').map((path) => {
      const head = path.trim().split(/[.[]/)[0]!;
      return names[head] ?? head;
    }),
  );
  return Object.fromEntries(Object.entries(image).filter(([name]) => wanted.has(name)));
}
