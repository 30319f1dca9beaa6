import { describe, expect, it } from 'vitest';
import type { Entity } from '../../lib/connectors/contract.js';
import { unreadByPartition } from '../../lib/engine/work/tail-reads.js';
import { MAX_LATEST_IDS, notReadYet } from '../../lib/run/partitions.js';
import { useEngineWithFakes } from '../support/harness.js';

/**
 * The open window's tail pass lists again the entities the window read at its latest version. A
 * partition keeps the ids of only {@link MAX_LATEST_IDS} of them, so a tie group larger than that
 * (a bulk edit at the version the window stopped at) was loaded and counted twice.
 */

const { engine } = useEngineWithFakes('tail-reads', { workers: 0 });

const LATEST = '2026-02-01T00:00:00.000Z';
const entity = (id: string, version = LATEST): Entity => ({ id, version, data: { id } });

describe('a tail pass over a tie group larger than the ids a partition keeps', () => {
  it('leaves out every entity the window read at its latest version, and keeps the ones it did not', async () => {
    const sourceId = 'tail-reads-1';
    const tie = Array.from({ length: 150 }, (_, i) => entity(`t${String(i).padStart(3, '0')}`));
    await engine.deps.items.loadAll(sourceId, tie, 'run-1', Date.now());
    // Reached the latest version after the window passed it (not stored at it), or edited since.
    const late = [entity('late-1'), entity('late-2')];
    const newer = [entity('t000', '2026-02-01T00:00:01.000Z')];
    const partition = {
      latest: LATEST,
      latestIds: tie.slice(0, MAX_LATEST_IDS).map((e) => e.id),
      tailFrom: LATEST,
    };
    const listed = [...tie.slice(1), ...late, ...newer];

    const unread = await unreadByPartition(engine.deps.items, sourceId, partition, listed);

    expect(unread.map((e) => e.id)).toEqual(['late-1', 'late-2', 't000']);
    // The ids alone leave the rest of the group to be counted again.
    expect(notReadYet(partition, listed)).toHaveLength(50 + 3);
  });

  it('outside a tail pass, or below the ids a partition keeps, asks nothing of the store', async () => {
    const items = {
      getVersions: async () => {
        throw new Error('the store was asked');
      },
    };
    const listed = [entity('a'), entity('b')];
    const window = {
      latest: LATEST,
      latestIds: Array.from({ length: MAX_LATEST_IDS }, (_, i) => `x${i}`),
      tailFrom: null,
    };
    expect(await unreadByPartition(items, 's', window, listed)).toHaveLength(2);
    const few = { latest: LATEST, latestIds: ['a'], tailFrom: LATEST };
    expect((await unreadByPartition(items, 's', few, listed)).map((e) => e.id)).toEqual(['b']);
  });
});
