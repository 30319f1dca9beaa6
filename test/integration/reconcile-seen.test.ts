import { describe, expect, it } from 'vitest';
import { SEEN_PART_BYTES } from '../../lib/store/seen-pages.js';
import { fakeRestConfig, putSource, useEngineWithFakes } from '../support/harness.js';
import { logRequests, type RequestLog } from '../support/request-log.js';

/*
 * A reconciliation records what it listed once per page, not on every entity: a reconciliation of
 * unchanged entities writes no item, and its tombstone pass still asks the source about none of
 * them — the page records say they were seen.
 */

const { engine, startFake, runToEnd } = useEngineWithFakes('recseen');
const ITEMS = '-items';

let log: RequestLog | undefined;
const requests = (): RequestLog => {
  log ??= logRequests(engine.aws.clients.dynamo);
  return log;
};

describe('a reconciliation of unchanged entities', () => {
  it('writes no item, fetches none by id, and tombstones only the deleted', async () => {
    const fake = await startFake({ entities: 12, pageSize: 5, seed: 31, profile: 'none' });
    await putSource(engine.deps, 'seen-unchanged', 'rest-json', fakeRestConfig(fake.url));
    expect((await runToEnd('seen-unchanged', 'full')).state).toBe('succeeded');
    requests().reset();
    fake.control.resetStats();

    const run = await runToEnd('seen-unchanged', 'reconciliation');

    expect(run).toMatchObject({ state: 'succeeded', progress: { processed: 12 } });
    expect(run.progress.tombstoned ?? 0).toBe(0);
    expect(requests().count('UpdateItem', ITEMS)).toBe(0);
    expect(fake.stats().itemFetches).toBe(0);

    const gone = fake.truth().entities[4]!.id;
    fake.control.delete([gone]);
    fake.control.resetStats();
    const second = await runToEnd('seen-unchanged', 'reconciliation');
    expect(second).toMatchObject({ state: 'succeeded', progress: { tombstoned: 1 } });
    // Only the deleted one was asked about; its tombstone is the one item write.
    expect(fake.stats().itemFetches).toBe(1);
    const tombstoned = (await engine.deps.items.listAll('seen-unchanged')).filter((i) => i.tombstonedAt);
    expect(tombstoned.map((i) => i.entityId)).toEqual([gone]);
  });
});

describe('the seen records of a listing', () => {
  const scope = (epoch = 1) => ({ runId: 'seen-run-1', epoch, chain: 'run' });

  it('keep every id any delivery of a page listed, and only the epoch’s own pages count', async () => {
    const { pages, index } = engine.deps.seen;
    await pages.put(scope(), 1, ['b', 'a'], 0);
    await pages.put(scope(), 1, ['a', 'b'], 0);
    // The page fetched again after a crash, the source edited meanwhile: 'c' moved here from page 2.
    await pages.put(scope(), 1, ['a', 'c'], 0);
    await pages.put(scope(), 2, ['d'], 0);
    // A fenced worker of another epoch lists 'z': not this epoch's listing.
    await pages.put(scope(2), 1, ['z'], 0);

    expect(await pages.listed(scope(), 2)).toEqual(['a', 'b', 'c', 'd']);
    expect([...(await index.seenBetween(scope(), 2, 'a', 'z', 0))].sort()).toEqual(['a', 'b', 'c', 'd']);
  });

  it('store a page too large for one item in parts, and find 64-bit and non-ASCII ids by key range', async () => {
    const { pages, index } = engine.deps.seen;
    const big = { runId: 'seen-run-big', epoch: 1, chain: 'run' };
    const wide = 'x'.repeat(900);
    const ids = Array.from(
      { length: Math.ceil((2.5 * SEEN_PART_BYTES) / 900) },
      (_, i) => `${wide}${1e6 + i}`,
    );
    const odd = ['18446744073709551615', '9223372036854775807', 'é-1', 'line\nbreak'];
    await pages.put(big, 1, ids, 0);
    await pages.put(big, 2, odd, 0);

    expect(await pages.listed(big, 2)).toHaveLength(ids.length + odd.length);
    const between = await index.seenBetween(big, 2, ids[10]!, ids[20]!, 0);
    for (const id of ids.slice(10, 21)) expect(between.has(id)).toBe(true);
    const numeric = await index.seenBetween(big, 2, '1', '9223372036854775807', 0);
    expect(numeric.has('18446744073709551615')).toBe(true);
    expect(numeric.has('9223372036854775807')).toBe(true);
    expect((await index.seenBetween(big, 2, 'é', 'é-2', 0)).has('é-1')).toBe(true);
  });
});
