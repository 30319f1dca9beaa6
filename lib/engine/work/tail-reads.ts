import type { Entity } from '../../connectors/contract.js';
import type { Partition } from '../../run/model.js';
import { MAX_LATEST_IDS, notReadYet } from '../../run/partitions.js';
import type { ItemStore } from '../../store/items.js';

/**
 * The entities of a partition's page that this run has not read yet. The open window's tail pass
 * lists again the entities it read at its latest version; the partition keeps the ids of up to
 * {@link MAX_LATEST_IDS} of them. Beyond that (a tie group larger than that at the version the
 * window stopped at), the store decides: an entity stored at exactly the version listed was read
 * by the window — the window read every entity at that version that existed when it passed it,
 * and an entity that reached the version later has not been stored at it yet.
 */
export async function unreadByPartition(
  items: Pick<ItemStore, 'getVersions'>,
  sourceId: string,
  partition: Pick<Partition, 'latest' | 'latestIds' | 'tailFrom'>,
  entities: readonly Entity[],
): Promise<Entity[]> {
  const left = notReadYet(partition, entities);
  const { latest } = partition;
  if (partition.tailFrom === null || latest === null || partition.latestIds.length < MAX_LATEST_IDS) {
    return left;
  }
  const atLatest = left.filter((e) => e.version === latest).map((e) => e.id);
  if (atLatest.length === 0) return left;
  const stored = await items.getVersions(sourceId, atLatest);
  const read = new Set(stored.filter((item) => item.version === latest).map((item) => item.entityId));
  return left.filter((e) => !(e.version === latest && read.has(e.id)));
}
