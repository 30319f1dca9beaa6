import fc from 'fast-check';
import type { LiveOptions, TraitOptions } from '../../../tools/fake-source/index.js';

/**
 * Drawing a source from the zoo: a connector shape, a size, a set of traits of real APIs (see
 * `tools/fake-source/traits/schema.ts`), the edits made while the first run reads it and the
 * edits made between runs. Sources are small (10–60 entities, pages of 3–12) so hundreds fit in
 * a test run; what they exercise is the combination, not the volume.
 */

/** How a drawn source is read: the connector and its pagination. */
export const SHAPES = ['github', 'gitlab', 'rest-page', 'rest-cursor', 'rest-stable-cursor'] as const;
/** One of {@link SHAPES}. */
export type Shape = (typeof SHAPES)[number];

/** The traits a source may be drawn with; each maps to fake-source traits or edits. */
export const TRAITS = [
  'postLimitFilter',
  'pageCap',
  'tieGroup',
  'longIds',
  'secondSince',
  'exclusiveSince',
  'transfers',
  'hostileBodies',
  'gzip',
  'cursorGrowth',
  'oversized',
  'padded',
  'chunked',
  'ignoreLimit',
  'bigTie',
  'blankPage',
  'hostileKeys',
  'countOver',
  'countUnder',
  'cursorExpiry',
] as const;
/** One of {@link TRAITS}. */
export type Trait = (typeof TRAITS)[number];

/** The shapes a trait means something for (the others ignore it, so it is never drawn for them). */
const APPLIES: Partial<Record<Trait, readonly Shape[]>> = {
  longIds: ['rest-page', 'rest-cursor', 'rest-stable-cursor'],
  hostileBodies: ['rest-page', 'rest-cursor', 'rest-stable-cursor'],
  // Field names that are JavaScript's (`constructor`, `__proto__`), lone surrogates in a name or an id.
  hostileKeys: ['rest-page', 'rest-cursor', 'rest-stable-cursor'],
  // A `total` above the rows served (Jira's search counts issues the caller may not see) and one
  // below them (Elasticsearch's `hits.total`, a lower bound past 10,000 hits).
  countOver: ['rest-page', 'rest-cursor', 'rest-stable-cursor'],
  countUnder: ['rest-page', 'rest-cursor', 'rest-stable-cursor'],
  cursorGrowth: ['rest-cursor', 'rest-stable-cursor'],
  // Tokens that die (Elasticsearch scroll ids, Salesforce query locators, Google page tokens): a
  // keyed stream follows one only inside a tie group, and lists the group again from its own key.
  // A stable cursor is the source's position itself, with no key of the run's to go back to.
  cursorExpiry: ['rest-cursor'],
  // GitLab answers a moved issue with the closed original and `moved_to_id`, not a redirect.
  transfers: ['github', 'rest-page', 'rest-cursor', 'rest-stable-cursor'],
  // GitHub's `since` and GitLab's `updated_after` ("on or after") are inclusive; an API whose
  // filter is exclusive (Stripe's `created[gt]`) is read with rest-json, configured to say so.
  exclusiveSince: ['rest-page', 'rest-cursor', 'rest-stable-cursor'],
  // Streams whose position is the run's own key. A stable cursor is the source's own keyset
  // position: a token that passes rows the page did not hold says they are not the caller's to
  // see (as post-limit filtering does), and no client can tell the two apart.
  blankPage: ['github', 'gitlab', 'rest-page', 'rest-cursor'],
};

/** True when `trait` means something for `shape`. */
export function applies(trait: Trait, shape: Shape): boolean {
  return APPLIES[trait]?.includes(shape) ?? true;
}

/** One drawn source: everything a run over it needs, and nothing random left. */
export interface ZooSource {
  readonly seed: number;
  readonly shape: Shape;
  readonly entities: number;
  readonly pageSize: number;
  /** The traits drawn (and applicable to the shape), sorted: the label of a failure. */
  readonly traits: readonly Trait[];
  /** The fake source's trait settings. */
  readonly fake: TraitOptions;
  /** A bulk edit before the first run: this many entities share one modification time (0: none). */
  readonly tieSize: number;
  /**
   * The most partitions the full run may be split into (1: one stream). The engine splits only
   * as far as the connector's plan makes worthwhile; the connector level reads one stream.
   */
  readonly partitions: number;
  /** Edits while the first run reads (the fake source's `live` behaviour). */
  readonly live: LiveOptions;
  /** Edits between the first run and the quiet one. */
  readonly between: {
    readonly touches: number;
    readonly tiedTouches: number;
    readonly deletes: number;
    readonly transfers: number;
    /** Entities grown past what the store holds in one item (each must be dead-lettered alone). */
    readonly oversized: number;
  };
}

/** The size range of drawn sources: entities at start and the page size asked for, both inclusive. */
export interface ZooSize {
  readonly entities: readonly [number, number];
  readonly pageSize: readonly [number, number];
}

/** Sources read at the connector level, where a page costs a local HTTP request. */
export const CONNECTOR_SIZE: ZooSize = { entities: [10, 60], pageSize: [3, 12] };
/** Sources run through the engine on the emulator, where a page costs a queue hop and a commit. */
export const ENGINE_SIZE: ZooSize = { entities: [10, 30], pageSize: [4, 10] };

/** Draws a source from the zoo; `excluded` traits are never drawn (see `PENDING_TRAITS`). */
export function zooSource(
  excluded: readonly Trait[] = [],
  size: ZooSize = CONNECTOR_SIZE,
): fc.Arbitrary<ZooSource> {
  const drawable = TRAITS.filter((t) => !excluded.includes(t));
  return fc
    .record({
      seed: fc.integer({ min: 1, max: 0x7fff_ffff }),
      shape: fc.constantFrom(...SHAPES),
      entities: fc.integer({ min: size.entities[0], max: size.entities[1] }),
      pageSize: fc.integer({ min: size.pageSize[0], max: size.pageSize[1] }),
      traits: fc.subarray([...drawable]),
      filter: fc.double({ min: 0.1, max: 0.5, noNaN: true }),
      cap: fc.record({
        first: fc.integer({ min: 2, max: 12 }),
        after: fc.nat(4),
        later: fc.integer({ min: 1, max: 12 }),
      }),
      tie: fc.double({ min: 1.1, max: 3, noNaN: true }),
      hostile: fc.integer({ min: 1, max: 6 }),
      hostileKeys: fc.integer({ min: 1, max: 3 }),
      skew: fc.integer({ min: 1, max: 5 }),
      growth: fc.integer({ min: 50, max: 600 }),
      padding: fc.integer({ min: 16 * 1_024, max: 256 * 1_024 }),
      overfill: fc.double({ min: 1.1, max: 4, noNaN: true }),
      // Which entity's first listing page comes back empty once (a fraction of the source's size).
      blankAt: fc.double({ min: 0, max: 1, noNaN: true }),
      // After which listing request every cursor issued so far expires.
      expiry: fc.integer({ min: 2, max: 40 }),
      // Half the sources one stream, half a full run split into windows read concurrently.
      partitions: fc.oneof(fc.constant(1), fc.integer({ min: 2, max: 4 })),
      live: fc.record({
        touchesPerPage: fc.nat(2),
        addsPerPage: fc.nat(1),
        deletesPerPage: fc.nat(1),
        tied: fc.boolean(),
        maxChanges: fc.nat(20),
      }),
      between: fc.record({
        touches: fc.nat(5),
        tiedTouches: fc.nat(8),
        deletes: fc.nat(3),
        transfers: fc.integer({ min: 1, max: 3 }),
        oversized: fc.integer({ min: 1, max: 2 }),
      }),
    })
    .map((d): ZooSource => {
      const traits = d.traits.filter((t) => applies(t, d.shape)).sort();
      const on = (t: Trait) => traits.includes(t);
      // A bulk edit of 130 rows read 100 a page (the largest page GitHub and GitLab serve): with
      // long ids, a keyset position listing the group's ids passes what a queue message holds.
      const big = on('bigTie');
      const entities = big ? Math.max(d.entities, 140) : d.entities;
      const pageSize = big ? 100 : d.pageSize;
      const tieSize = big ? 130 : on('tieGroup') ? Math.min(entities, Math.ceil(pageSize * d.tie)) : 0;
      const fake: TraitOptions = {
        postLimitFilter: on('postLimitFilter') ? d.filter : 0,
        pageCap: on('pageCap') ? d.cap : null,
        longIds: on('longIds'),
        since: {
          precision: on('secondSince') ? 's' : 'ms',
          bound: on('exclusiveSince') ? 'exclusive' : 'inclusive',
        },
        hostileBodies: on('hostileBodies') ? d.hostile : 0,
        gzip: on('gzip'),
        cursorGrowth: on('cursorGrowth') ? d.growth : 0,
        padBytes: on('padded') ? d.padding : 0,
        hideLength: on('chunked'),
        // More rows than asked, within the records-per-page limit (four times the page size).
        ignoreLimit: on('ignoreLimit') ? Math.min(4 * pageSize, Math.ceil(pageSize * d.overfill)) : null,
        blankOnce: on('blankPage') ? [1 + Math.floor(d.blankAt * (entities - 1))] : [],
        hostileKeys: on('hostileKeys') ? d.hostileKeys : 0,
        countSkew: on('countOver') ? d.skew : on('countUnder') ? -d.skew : 0,
        expireCursorsAfter: on('cursorExpiry') ? [d.expiry] : [],
      };
      return {
        seed: d.seed,
        shape: d.shape,
        entities,
        pageSize,
        traits,
        fake,
        tieSize,
        partitions: d.partitions,
        live: d.live,
        between: {
          touches: d.between.touches,
          tiedTouches: on('tieGroup') ? d.between.tiedTouches : 0,
          deletes: d.between.deletes,
          transfers: on('transfers') ? d.between.transfers : 0,
          oversized: on('oversized') ? d.between.oversized : 0,
        },
      };
    });
}

/** A one-line description of a drawn source, for failure reports. */
export function describeSource(s: ZooSource): string {
  const traits = s.traits.length === 0 ? 'no traits' : s.traits.join(' + ');
  const split = s.partitions > 1 ? `, full run in up to ${s.partitions} partitions` : '';
  return `${s.shape}, ${s.entities} entities, pages of ${s.pageSize}${split}, ${traits} (source seed ${s.seed})`;
}
