import type { EntityStore, FakeEntity } from '../model.js';
import { hash32, mulberry32, shuffled, unit } from '../prng.js';
import { type HostileValue, hostileFor } from './bodies.js';
import { longRecordId, resolveLongId } from './ids.js';
import {
  HOSTILE_KEY_KINDS,
  HOSTILE_KINDS,
  type HostileKind,
  NO_TRAITS,
  type TraitOptions,
  type Traits,
  traitsSchema,
} from './schema.js';

/** Where a transferred entity lives now (see {@link TraitState.transfer}). */
export interface Moved {
  /** The GitHub issue number it has in the repository it moved to: a number this repository uses too. */
  readonly number: number;
  /** The rest-json id it has now (`<id>-moved`), as an issue moved to another Jira project gets a new key. */
  readonly id: string;
  readonly movedAtMs: number;
}

/** What the traits add to the ground truth. */
export interface TraitTruth {
  /** Live entities no listing shows and no fetch finds (post-limit filtering): not to be harvested. */
  readonly filteredIds: readonly string[];
  /** Live entities carrying a hostile field, by kind. */
  readonly hostile: Readonly<Record<string, HostileKind>>;
  /** The integer each `big-integer` entity carries (field `big`), as exact decimal digits. */
  readonly bigIntegers: Readonly<Record<string, string>>;
  /** Entities moved to another repository or project: gone from this source, answered by a redirect. */
  readonly transferredIds: readonly string[];
}

/** The trait settings of one source and what they decided so far. */
export class TraitState {
  private settings: Traits = NO_TRAITS;
  private listings = 0;
  /** Listing counts after which every cursor issued so far expired. */
  private expiries: number[] = [];
  /** The listing request that last handed out each `/records` cursor. */
  private readonly issued = new Map<string, number>();
  /** Entities of `blankOnce` whose page came back blank already. */
  private blanked = new Set<number>();
  private hostile = new Map<FakeEntity, HostileKind>();
  private readonly moved = new Map<FakeEntity, Moved>();

  constructor(
    private readonly seed: number,
    private readonly store: EntityStore,
  ) {}

  /** The traits in force. */
  get current(): Traits {
    return this.settings;
  }

  /** Switches traits; the page-cap counter restarts and hostile entities are chosen again. */
  set(options: TraitOptions): Traits {
    this.settings = traitsSchema.parse(options);
    this.listings = 0;
    this.expiries = [...this.settings.expireCursorsAfter];
    this.blanked = new Set();
    const order = shuffled(
      this.store.all().filter((e) => !e.deleted),
      mulberry32(hash32(this.seed, 'hostile')),
    );
    const { hostileBodies, hostileKeys } = this.settings;
    this.hostile = new Map<FakeEntity, HostileKind>([
      ...order.slice(0, hostileBodies).map((e, i) => [e, HOSTILE_KINDS[i % HOSTILE_KINDS.length]!] as const),
      ...order
        .slice(hostileBodies, hostileBodies + hostileKeys)
        .map((e, i) => [e, HOSTILE_KEY_KINDS[i % HOSTILE_KEY_KINDS.length]!] as const),
    ]);
    return this.settings;
  }

  /** Rows one listing request may hold: the client's limit under the page cap in force. Counts the request. */
  limit(requested: number): number {
    this.listings += 1;
    if (this.settings.ignoreLimit !== null) return this.settings.ignoreLimit;
    const cap = this.settings.pageCap;
    if (cap === null) return requested;
    return Math.min(requested, this.listings <= cap.after ? cap.first : cap.later);
  }

  /**
   * Records that listing request (the current one) handed out `cursor`: the same position handed
   * out again later is a fresh continuation.
   */
  issueCursor(cursor: string): void {
    this.issued.set(cursor, this.listings);
  }

  /**
   * True when `cursor` expired before the current request (`expireCursorsAfter`, `expireCursors`):
   * an expiry after request k kills every cursor last handed out by request k or earlier.
   */
  cursorExpired(cursor: string): boolean {
    const issuedBy = this.issued.get(cursor) ?? 0;
    return this.expiries.some((k) => k < this.listings && issuedBy <= k);
  }

  /** Every cursor issued so far expires (a control action: the source evicted its continuations). */
  expireCursors(): void {
    this.expiries.push(this.listings);
  }

  /** The time a `since` filter actually applies, and whether rows at exactly that time match. */
  since(sinceMs: number): { readonly ms: number; readonly inclusive: boolean } {
    const { precision, bound } = this.settings.since;
    const ms = precision === 's' ? Math.floor(sinceMs / 1_000) * 1_000 : sinceMs;
    return { ms, inclusive: bound === 'inclusive' };
  }

  /** Index of the first live entity a `since` filter lets through. */
  sinceIndex(sinceMs: number): number {
    const { ms, inclusive } = this.since(sinceMs);
    if (inclusive) return this.store.indexSince(ms);
    // Strictly after: past every entity at `ms`, whatever its id.
    return this.store.indexSince(ms + 1);
  }

  /** True when the caller may see the entity (post-limit filtering hides the others everywhere). */
  visible(entity: FakeEntity): boolean {
    return unit(this.seed, 'filtered', entity.id) >= this.settings.postLimitFilter;
  }

  /** A page after the limit was applied, without the rows the caller may not see. */
  filter(page: readonly FakeEntity[]): FakeEntity[] {
    const blank = page.find((e) => this.settings.blankOnce.includes(e.number) && !this.blanked.has(e.number));
    if (blank) {
      this.blanked.add(blank.number);
      return [];
    }
    return page.filter((e) => this.visible(e));
  }

  /** The id the rest-json shape serves for an entity. */
  publicId(entity: FakeEntity): string {
    return this.settings.longIds ? longRecordId(this.seed, entity.number) : entity.id;
  }

  /** The entity a rest-json id names (a long id or `e-000001`), or undefined. */
  resolve(id: string): FakeEntity | undefined {
    const number = resolveLongId(id);
    return number === null ? this.store.find(id) : this.store.find(number);
  }

  /** The hostile field an entity carries in the rest-json shape, if any. */
  hostileField(entity: FakeEntity): HostileValue | null {
    const kind = this.hostile.get(entity);
    return kind === undefined ? null : hostileFor(kind, this.seed, entity.number);
  }

  /**
   * Moves a live entity to another repository or project: it leaves this source's listings, and
   * fetching it by id answers a redirect to its new place (see `transfers.ts`). Its new GitHub
   * number is one this repository still uses, so a client that stores the answer under the
   * answer's number overwrites an unrelated issue.
   */
  transfer(entity: FakeEntity, nowMs: number): Moved {
    const taken = new Set([...this.moved.values()].map((m) => m.number));
    const others = this.store.live().filter((e) => e !== entity && !taken.has(e.number));
    const victim =
      others.length === 0
        ? entity.number
        : others[hash32(this.seed, 'moved', entity.id) % others.length]!.number;
    const moved: Moved = { number: victim, id: `${this.publicId(entity)}-moved`, movedAtMs: nowMs };
    this.store.delete(entity);
    this.moved.set(entity, moved);
    return moved;
  }

  /** Where an entity moved, if it did. */
  movedTo(entity: FakeEntity): Moved | undefined {
    return this.moved.get(entity);
  }

  /** The moved entity now living under `number` in the repository it moved to. */
  movedByNumber(number: number): { readonly entity: FakeEntity; readonly moved: Moved } | undefined {
    for (const [entity, moved] of this.moved) if (moved.number === number) return { entity, moved };
    return undefined;
  }

  /** The moved entity now living under the rest-json id `id`. */
  movedById(id: string): { readonly entity: FakeEntity; readonly moved: Moved } | undefined {
    for (const [entity, moved] of this.moved) if (moved.id === id) return { entity, moved };
    return undefined;
  }

  /** What the traits add to the ground truth. */
  truth(): TraitTruth {
    const live = this.store.live();
    const hostile: Record<string, HostileKind> = {};
    const bigIntegers: Record<string, string> = {};
    for (const [entity, kind] of this.hostile) {
      if (entity.deleted) continue;
      hostile[entity.id] = kind;
      const value = this.hostileField(entity);
      if (kind === 'big-integer' && value) bigIntegers[entity.id] = value.digits;
    }
    return {
      filteredIds: live.filter((e) => !this.visible(e)).map((e) => e.id),
      hostile,
      bigIntegers,
      transferredIds: [...this.moved.keys()].map((e) => e.id),
    };
  }
}
