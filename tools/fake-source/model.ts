import { hash32 } from './prng.js';
import { entityText } from './text.js';

/** One entity of the fake source, as the source itself stores it (not as any route serves it). */
export interface FakeEntity {
  /** `e-000001`, `e-000002`, …: stable, sortable, and obviously fake. */
  readonly id: string;
  /** 1..N: the GitHub shape's issue number. */
  readonly number: number;
  readonly createdAtMs: number;
  updatedAtMs: number;
  /** Starts at 1, +1 on every touch. */
  version: number;
  readonly title: string;
  /** Mutable so a test can grow an entity past the store's item limit (`resize`). */
  body: string;
  deleted: boolean;
}

/** The fields ground truth and control results report for one entity. */
export interface TruthEntity {
  readonly id: string;
  readonly number: number;
  /** ISO 8601 UTC with milliseconds, e.g. `2024-01-01T00:00:00.000Z`. */
  readonly updatedAt: string;
  readonly version: number;
}

/** The position of an entity in the listing order (updatedAt, id): what a keyset cursor encodes. */
export interface ListingKey {
  readonly updatedAtMs: number;
  readonly id: string;
}

/** Spacing of generated and touched modification times: one second, as the fake's timeline promises. */
export const TICK_MS = 1_000;

/** Formats an entity id from its number: `e-000001`. */
export function entityId(number: number): string {
  return `e-${String(number).padStart(6, '0')}`;
}

/** Strictly orders listing keys by (updatedAt, id). */
export function compareKeys(a: ListingKey, b: ListingKey): number {
  if (a.updatedAtMs !== b.updatedAtMs) return a.updatedAtMs - b.updatedAtMs;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** The truth view of one entity. */
export function toTruth(entity: FakeEntity): TruthEntity {
  const { id, number, version } = entity;
  return { id, number, updatedAt: new Date(entity.updatedAtMs).toISOString(), version };
}

/**
 * The entities of one fake source, kept in listing order so pages are slices, not sorts: the
 * benchmark lists hundreds of thousands of entities and must measure Harvester, not this fake.
 */
export class EntityStore {
  private readonly byNumber: FakeEntity[] = [];
  /** Live (non-deleted) entities ordered by (updatedAt, id). */
  private readonly order: FakeEntity[] = [];
  /** Latest modification time ever assigned, deleted entities included, so time never goes back. */
  private clockMs: number;

  constructor(
    private readonly seed: number,
    count: number,
    startAtMs: number,
  ) {
    this.clockMs = startAtMs - TICK_MS;
    this.add(count);
  }

  /** Every entity ever created, deleted ones included, in number order. */
  all(): readonly FakeEntity[] {
    return this.byNumber;
  }

  /** Live entities in listing order. Callers must not mutate the array. */
  live(): readonly FakeEntity[] {
    return this.order;
  }

  /** Finds an entity by id (`e-000007`) or issue number (7), deleted ones included. */
  find(ref: string | number): FakeEntity | undefined {
    const number = typeof ref === 'number' ? ref : /^e-\d+$/.test(ref) ? Number(ref.slice(2)) : Number.NaN;
    const entity = Number.isInteger(number) ? this.byNumber[number - 1] : undefined;
    return entity && (typeof ref === 'number' || entity.id === ref) ? entity : undefined;
  }

  /** Index of the first live entity whose key is greater than `key` (or ≥ when `inclusive`). */
  indexAfter(key: ListingKey, inclusive = false): number {
    let low = 0;
    let high = this.order.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      const cmp = compareKeys(this.order[mid]!, key);
      if (cmp < 0 || (cmp === 0 && !inclusive)) low = mid + 1;
      else high = mid;
    }
    return low;
  }

  /** Index of the first live entity modified at or after `sinceMs`. */
  indexSince(sinceMs: number): number {
    return this.indexAfter({ updatedAtMs: sinceMs, id: '' }, true);
  }

  /** Creates `count` entities modified after every existing one. */
  add(count: number): FakeEntity[] {
    const created: FakeEntity[] = [];
    for (let i = 0; i < count; i++) {
      const number = this.byNumber.length + 1;
      this.clockMs += TICK_MS;
      const entity: FakeEntity = {
        id: entityId(number),
        number,
        createdAtMs: this.clockMs,
        updatedAtMs: this.clockMs,
        version: 1,
        ...entityText(this.seed, number),
        deleted: false,
      };
      this.byNumber.push(entity);
      this.order.push(entity);
      created.push(entity);
    }
    return created;
  }

  /** Modifies a live entity: later than every existing one, version + 1. It moves to the end of listings. */
  touch(entity: FakeEntity): void {
    this.touchAll([entity], false);
  }

  /**
   * Modifies live entities in the order given. `tied`: one shared updatedAt for all of them (a
   * bulk edit within one second), listed among themselves by id — a tie group.
   */
  touchAll(entities: readonly FakeEntity[], tied: boolean): void {
    if (tied) this.clockMs += TICK_MS;
    const moved: FakeEntity[] = [];
    for (const entity of entities) {
      this.removeFromOrder(entity);
      if (!tied) this.clockMs += TICK_MS;
      entity.updatedAtMs = this.clockMs;
      entity.version += 1;
      moved.push(entity);
    }
    if (tied) moved.sort((a, b) => compareKeys(a, b));
    for (const entity of moved) this.insertInOrder(entity);
  }

  /**
   * Modifies a live entity as a host with a clock of its own does: stamped `atMs` exactly (hours
   * ahead, say), version + 1, without moving this source's clock, so later edits are stamped
   * before it.
   */
  stamp(entity: FakeEntity, atMs: number): void {
    this.removeFromOrder(entity);
    entity.updatedAtMs = atMs;
    entity.version += 1;
    this.insertInOrder(entity);
  }

  /** Puts a live entity at its place in listing order: at the end, unless an entity stamped ahead is there. */
  private insertInOrder(entity: FakeEntity): void {
    const last = this.order.at(-1);
    if (last === undefined || compareKeys(last, entity) < 0) this.order.push(entity);
    else this.order.splice(this.indexAfter(entity), 0, entity);
  }

  /**
   * Takes a live entity out of listings only, as a lagging listing index does: fetching it by id
   * still finds it. A later touch lists it again.
   */
  hideFromListings(entity: FakeEntity): void {
    this.removeFromOrder(entity);
  }

  /** Deletes a live entity: it leaves listings and item fetches, and truth lists it as deleted. */
  delete(entity: FakeEntity): void {
    this.removeFromOrder(entity);
    entity.deleted = true;
  }

  /** Brings a deleted entity back, unchanged: same version, same `updatedAt`, at its place in listings. */
  restore(entity: FakeEntity): void {
    entity.deleted = false;
    this.insertInOrder(entity);
  }

  /** A per-entity variant in [0, n), stable for the seed: used to pick how a broken record breaks. */
  variant(entity: FakeEntity, salt: string, n: number): number {
    return hash32(this.seed, salt, entity.id) % n;
  }

  private removeFromOrder(entity: FakeEntity): void {
    const index = this.indexAfter(entity, true);
    if (this.order[index] === entity) this.order.splice(index, 1);
  }
}
