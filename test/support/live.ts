import type { EngineDeps } from '../../lib/engine/index.js';
import type { FakeSource } from '../../tools/fake-source/index.js';

/** How a harvest compares with the source's ground truth, entity by entity. */
export interface Comparison {
  /** Live entities with no stored item (or only a tombstoned one). */
  readonly missing: string[];
  /** Live entities stored at an older version than the source's. */
  readonly stale: string[];
  /** Stored, untombstoned items the source has deleted. */
  readonly notTombstoned: string[];
  /** Tombstoned items that are live at the source. */
  readonly wronglyTombstoned: string[];
}

/**
 * Compares what Harvester stored for `sourceId` with what the fake source holds now. Invalid
 * records (dead-lettered by design) are left out of `missing` and `stale`.
 */
export async function compareWithTruth(
  deps: EngineDeps,
  sourceId: string,
  fake: FakeSource,
  shape: 'github' | 'rest',
): Promise<Comparison> {
  const truth = fake.truth();
  const invalid = new Set(truth.invalidIds);
  const stored = new Map((await deps.items.listAll(sourceId)).map((item) => [item.entityId, item]));
  const missing: string[] = [];
  const stale: string[] = [];
  const wronglyTombstoned: string[] = [];
  for (const entity of truth.entities) {
    const id = shape === 'github' ? String(entity.number) : entity.id;
    const item = stored.get(id);
    if (item?.tombstonedAt !== undefined) wronglyTombstoned.push(id);
    if (invalid.has(entity.id)) continue;
    if (!item) missing.push(id);
    else if (item.version !== entity.updatedAt) stale.push(id);
  }
  const deleted = new Set(truth.deletedIds);
  const notTombstoned = [...stored.values()]
    .filter((item) => item.tombstonedAt === undefined)
    .filter((item) => deleted.has(shape === 'github' ? `e-${item.entityId.padStart(6, '0')}` : item.entityId))
    .map((item) => item.entityId);
  return { missing, stale, notTombstoned, wronglyTombstoned };
}
