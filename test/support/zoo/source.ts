import {
  type FakeSource,
  fakeRestConfig,
  type GroundTruth,
  longRecordId,
} from '../../../tools/fake-source/index.js';
import { mulberry32 } from '../../../tools/fake-source/prng.js';
import type { Shape, ZooSource } from './draw.js';

/**
 * A drawn source on a running fake source: its connector config, the ids its connector stores
 * entities under, the edits the draw asks for, and what a correct harvest holds afterwards.
 */

/** A body past what the store holds in one item (350 KB), so the entity must be dead-lettered alone. */
export const OVERSIZED_BYTES = 400 * 1_024;

/** The connector a shape is read with. */
export function connectorOf(shape: Shape): string {
  return shape === 'github' ? 'github-issues' : shape === 'gitlab' ? 'gitlab-issues' : 'rest-json';
}

/**
 * The connector config of a drawn source over `fake`. A source whose cursors grow is configured
 * as its owner would after the first refusal: its cursor limit raised to the ceiling. A rest-json
 * source's `since` filter is declared as its API documents it (precision, exclusive bound).
 */
export function configOf(s: ZooSource, fake: FakeSource): Record<string, unknown> {
  const config = shapeConfig(s, fake);
  const rest = connectorOf(s.shape) === 'rest-json';
  return {
    ...config,
    ...(s.fake.cursorGrowth ? { limits: { maxCursorLength: 8_192 } } : {}),
    ...(rest && s.fake.since?.precision === 's' ? { sincePrecision: 's' } : {}),
    ...(rest && s.fake.since?.bound === 'exclusive' ? { sinceBound: 'exclusive' } : {}),
  };
}

function shapeConfig(s: ZooSource, fake: FakeSource): Record<string, unknown> {
  switch (s.shape) {
    case 'github':
      return { owner: 'zoo', repo: 'z', baseUrl: fake.url, perPage: s.pageSize };
    case 'gitlab':
      return { project: 'zoo/z', baseUrl: `${fake.url}/api/v4`, perPage: s.pageSize };
    case 'rest-page':
      return fakeRestConfig(fake.url, {
        url: `${fake.url}/records-paged`,
        pageSize: s.pageSize,
        pagination: { type: 'page' },
      });
    case 'rest-cursor':
      // The source's cursor, not declared stable: the run keeps its own key.
      return fakeRestConfig(fake.url, {
        pageSize: s.pageSize,
        pagination: { type: 'cursor', cursorParam: 'cursor', nextCursorPath: 'next_cursor' },
      });
    case 'rest-stable-cursor':
      return fakeRestConfig(fake.url, { pageSize: s.pageSize });
  }
}

/** The id the connector stores an entity under (GitHub numbers and GitLab iids are the entity's number). */
export function storedId(s: ZooSource, entity: { readonly id: string; readonly number: number }): string {
  if (s.shape === 'github' || s.shape === 'gitlab') return String(entity.number);
  return s.fake.longIds ? longRecordId(s.seed, entity.number) : entity.id;
}

function pick<T>(items: readonly T[], count: number, random: () => number): T[] {
  const pool = [...items];
  const chosen: T[] = [];
  while (chosen.length < count && pool.length > 0)
    chosen.push(pool.splice(Math.floor(random() * pool.length), 1)[0]!);
  return chosen;
}

/** The bulk edit before the first run: a tie group of `tieSize` entities (one `UPDATE … SET updated_at = now()`). */
export function editBefore(s: ZooSource, fake: FakeSource): void {
  if (s.tieSize === 0) return;
  const random = mulberry32(s.seed ^ 0x7105);
  const ids = fake.truth().entities.map((e) => e.id);
  fake.control.touch(pick(ids, s.tieSize, random), { tied: true });
}

/**
 * The edits between the first run and the quiet one, chosen by the source's seed. Returns the
 * entities grown past the item limit.
 */
export function editBetween(s: ZooSource, fake: FakeSource): { readonly oversized: Set<string> } {
  const random = mulberry32(s.seed ^ 0xed17);
  const live = () => fake.truth().entities.map((e) => e.id);
  const { touches, tiedTouches, deletes, transfers, oversized } = s.between;
  fake.control.touch(pick(live(), touches, random));
  if (tiedTouches > 0) fake.control.touch(pick(live(), tiedTouches, random), { tied: true });
  fake.control.delete(pick(live(), deletes, random));
  fake.control.transfer(pick(live(), transfers, random));
  const grown = fake.control.resize(pick(live(), oversized, random), OVERSIZED_BYTES);
  return { oversized: new Set(grown.changed.map((e) => e.id)) };
}

/** What a correct harvest of the source holds, by stored id. */
export interface Expected {
  /** Visible entities the store can hold: stored at exactly this version. */
  readonly stored: Map<string, string>;
  /**
   * Visible entities the store cannot hold (1e400, nesting past 32 levels, too large, a lone
   * surrogate in a field name or the id): each an item dead letter, by the ref it is filed under.
   */
  readonly unstorable: Set<string>;
  /** Entities deleted or moved away: never stored live after a reconciliation. */
  readonly gone: Set<string>;
  /** Every id the source ever had: anything else stored is a phantom. */
  readonly known: Set<string>;
  /** Exact digits of the integer each `big-integer` entity carries in `big`. */
  readonly bigIntegers: Map<string, string>;
}

/** The expected harvest, from the ground truth; `oversized` holds the entities grown past the item limit. */
export function expected(s: ZooSource, truth: GroundTruth, oversized: ReadonlySet<string>): Expected {
  const filtered = new Set(truth.filteredIds);
  const invalid = new Set(truth.invalidIds);
  const stored = new Map<string, string>();
  const unstorable = new Set<string>();
  const bigIntegers = new Map<string, string>();
  const number = (id: string) => Number(id.slice(2));
  const idOf = (id: string) => storedId(s, { id, number: number(id) });
  for (const entity of truth.entities) {
    if (filtered.has(entity.id) || invalid.has(entity.id)) continue;
    const kind = truth.hostile[entity.id];
    // An id with a lone surrogate is filed under the id as it can be written (U+FFFD in its place).
    if (kind === 'surrogate-id') unstorable.add(`${idOf(entity.id)}\ufffd`);
    else if (kind === 'overflow' || kind === 'deep' || kind === 'surrogate-name' || oversized.has(entity.id))
      unstorable.add(idOf(entity.id));
    else stored.set(idOf(entity.id), entity.updatedAt);
    const digits = truth.bigIntegers[entity.id];
    if (digits !== undefined) bigIntegers.set(idOf(entity.id), digits);
  }
  const gone = new Set(truth.deletedIds.map(idOf));
  const ids = [...truth.entities.map((e) => idOf(e.id)), ...gone];
  // With hostile keys on, the source serves some ids with a lone surrogate appended (and hostile
  // entities are chosen again when traits change): those are the source's ids too, as served.
  const served = s.fake.hostileKeys ? ids.map((id) => `${id}\ud800`) : [];
  const known = new Set([...ids, ...served]);
  return { stored, unstorable, gone, known, bigIntegers };
}

/** The digits of a stored integer, whatever lossless form the store gave it (number, bigint, string, `{ value }`). */
export function digitsOf(value: unknown): string | null {
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'number') return Number.isSafeInteger(value) ? String(value) : `${value} (rounded)`;
  if (typeof value === 'string') return value;
  if (typeof value === 'object' && value !== null && 'value' in value)
    return String((value as { value: unknown }).value);
  return null;
}
