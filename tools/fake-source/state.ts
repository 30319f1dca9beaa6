import { FaultInjector } from './faults.js';
import { EntityStore, type FakeEntity, type TruthEntity, toTruth } from './model.js';
import { hash32, mulberry32, shuffled } from './prng.js';
import {
  type FaultProfile,
  type FaultProfileName,
  type ResolvedFaultProfile,
  resolveProfile,
} from './profiles.js';
import type { TraitOptions } from './traits/schema.js';
import { TraitState, type TraitTruth } from './traits/state.js';

/**
 * What the source really holds (`GET /_truth`): what a correct harvest must end up with. The
 * trait fields (see {@link TraitTruth}) are empty while no trait is on.
 */
export interface GroundTruth extends TraitTruth {
  /** Every non-deleted entity in listing order (updatedAt, id), broken and not-found ones included. */
  readonly entities: readonly TruthEntity[];
  /** Live entities currently served as broken records: a correct run dead-letters exactly these. */
  readonly invalidIds: readonly string[];
  /** Entities deleted through control: no longer listed or fetchable. */
  readonly deletedIds: readonly string[];
  /** Live entities listed but answering 404 when fetched by id. */
  readonly notFoundIds: readonly string[];
}

/** Result of `touch` and `delete`: what changed, and which references named nothing live. */
export interface ChangeResult {
  readonly changed: readonly TruthEntity[];
  readonly unknownIds: readonly string[];
}

/**
 * The mutable state of one fake source: its entities, its current profile and which entities it
 * currently serves broken. Routes read it; control commands change it.
 */
export class SourceState {
  readonly store: EntityStore;
  readonly faults: FaultInjector;
  /** The source zoo's behaviours in force (see `traits/schema.ts`). */
  readonly traits: TraitState;
  private profileInUse: ResolvedFaultProfile;
  private invalid = new Set<FakeEntity>();
  private notFound = new Set<FakeEntity>();

  constructor(
    private readonly seed: number,
    entities: number,
    startAtMs: number,
    profile: FaultProfile | FaultProfileName,
    private readonly now: () => number,
    traits: TraitOptions = {},
  ) {
    this.store = new EntityStore(seed, entities, startAtMs);
    this.traits = new TraitState(seed, this.store);
    this.traits.set(traits);
    this.profileInUse = resolveProfile(profile);
    this.faults = new FaultInjector(seed, this.profileInUse, now);
    this.chooseBrokenEntities();
  }

  /** The profile in force, with defaults applied. */
  get profile(): ResolvedFaultProfile {
    return this.profileInUse;
  }

  /**
   * Switches profile. The broken and not-found entities are chosen again from the seed, so
   * switching to a profile with breakage after `fix` breaks records again, deliberately.
   */
  setProfile(profile: FaultProfile | FaultProfileName): ResolvedFaultProfile {
    this.profileInUse = resolveProfile(profile);
    this.faults.setProfile(this.profileInUse);
    this.chooseBrokenEntities();
    return this.profileInUse;
  }

  /**
   * "The source was fixed": broken records are served valid and not-found items are found again —
   * all of them, or only the entities named (a partial fix, for retry-failed runs that still fail some).
   */
  fix(refs?: readonly (string | number)[]): void {
    if (refs === undefined) {
      this.invalid.clear();
      this.notFound.clear();
      return;
    }
    for (const ref of refs) {
      const entity = this.store.find(ref);
      if (!entity) continue;
      this.invalid.delete(entity);
      this.notFound.delete(entity);
    }
  }

  /** True when the entity is currently served as a broken record. */
  isInvalid(entity: FakeEntity): boolean {
    return this.invalid.has(entity);
  }

  /** True when fetching the entity by id answers 404 (deleted, chosen as not found, or invisible to the caller). */
  isHiddenFromFetch(entity: FakeEntity): boolean {
    return entity.deleted || this.notFound.has(entity) || !this.traits.visible(entity);
  }

  /**
   * Moves live entities to another repository or project (see `traits/transfers.ts`): they leave
   * listings, truth lists them as deleted and transferred, and fetching one answers a redirect.
   */
  transfer(refs: readonly (string | number)[]): ChangeResult {
    return this.change(refs, (entity) => this.traits.transfer(entity, this.now()));
  }

  /**
   * Modifies live entities (later than every other, version + 1), in the order given; `tied`: all
   * at one shared updatedAt (a bulk edit).
   */
  touch(refs: readonly (string | number)[], options: { tied?: boolean; atMs?: number } = {}): ChangeResult {
    const { atMs } = options;
    if (atMs !== undefined) return this.change(refs, (entity) => this.store.stamp(entity, atMs));
    if (!options.tied) return this.change(refs, (entity) => this.store.touch(entity));
    const entities: FakeEntity[] = [];
    const result = this.change(refs, (entity) => entities.push(entity), true);
    this.store.touchAll(entities, true);
    return { changed: entities.map(toTruth), unknownIds: result.unknownIds };
  }

  /** Gives live entities a body of `bytes` characters (an item too large to store), and touches them. */
  resize(refs: readonly (string | number)[], bytes: number): ChangeResult {
    return this.change(refs, (entity) => {
      entity.body = 'x'.repeat(bytes);
      this.store.touch(entity);
    });
  }

  /** Takes live entities out of listings only (a lagging index); fetching them by id still works. */
  hide(refs: readonly (string | number)[]): ChangeResult {
    return this.change(refs, (entity) => this.store.hideFromListings(entity));
  }

  /** Deletes live entities. */
  delete(refs: readonly (string | number)[]): ChangeResult {
    return this.change(refs, (entity) => this.store.delete(entity));
  }

  /** Brings deleted entities back at the version and time they had (a restore from the trash). */
  restore(refs: readonly (string | number)[]): ChangeResult {
    const changed: TruthEntity[] = [];
    const unknownIds: string[] = [];
    for (const ref of refs) {
      const entity = this.store.find(ref);
      if (!entity?.deleted) unknownIds.push(String(ref));
      else {
        this.store.restore(entity);
        changed.push(toTruth(entity));
      }
    }
    return { changed, unknownIds };
  }

  /** Creates `count` new entities, modified after every existing one; they are never broken. */
  add(count: number): readonly TruthEntity[] {
    return this.store.add(count).map(toTruth);
  }

  /** The ground truth as it stands now. */
  truth(): GroundTruth {
    const live = (set: Set<FakeEntity>) =>
      [...set]
        .filter((e) => !e.deleted)
        .sort((a, b) => a.number - b.number)
        .map((e) => e.id);
    return {
      entities: this.store.live().map(toTruth),
      invalidIds: live(this.invalid),
      deletedIds: this.store
        .all()
        .filter((e) => e.deleted)
        .map((e) => e.id),
      notFoundIds: live(this.notFound),
      ...this.traits.truth(),
    };
  }

  private change(
    refs: readonly (string | number)[],
    apply: (entity: FakeEntity) => void,
    dedupe = false,
  ): ChangeResult {
    const changed: TruthEntity[] = [];
    const unknownIds: string[] = [];
    const done = new Set<FakeEntity>();
    for (const ref of refs) {
      const entity = this.store.find(ref);
      if (!entity || entity.deleted || (dedupe && done.has(entity))) {
        unknownIds.push(String(ref));
        continue;
      }
      done.add(entity);
      apply(entity);
      changed.push(toTruth(entity));
    }
    return { changed, unknownIds };
  }

  // Broken and not-found entities are disjoint, so each fault is observed on its own.
  private chooseBrokenEntities(): void {
    const order = shuffled(
      this.store.all().filter((e) => !e.deleted),
      mulberry32(hash32(this.seed, 'breakage')),
    );
    const { invalidRecords, itemNotFound } = this.profileInUse;
    this.invalid = new Set(order.slice(0, invalidRecords));
    this.notFound = new Set(order.slice(invalidRecords, invalidRecords + itemNotFound));
  }
}
