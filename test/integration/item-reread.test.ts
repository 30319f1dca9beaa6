import { ulid } from 'ulid';
import { describe, expect, it } from 'vitest';
import type { Entity } from '../../lib/connectors/contract.js';
import { contentHashOf } from '../../lib/store/items.js';
import { fakeRestConfig, putSource, useEngineWithFakes } from '../support/harness.js';
import { logRequests, type RequestLog } from '../support/request-log.js';

/*
 * Read first, write only what changed: a page reads its entities' stored version and content
 * hash (one BatchGetItem), skips the unchanged ones and writes the rest with the one conditional
 * write the read chose — whose condition still judges it.
 */

const { engine, startFake, runToEnd } = useEngineWithFakes('itemreread');
const T = '2026-01-01T00:00:00Z';
const LATER = '2026-01-01T00:00:01Z';
const entity = (id: string, version: string, title: string): Entity => ({ id, version, data: { title } });
const ITEMS = '-items';

let log: RequestLog | undefined;
const requests = (): RequestLog => {
  log ??= logRequests(engine.aws.clients.dynamo);
  return log;
};

describe('a page read first', () => {
  it('writes nothing for unchanged entities, and only the changed one', async () => {
    const items = engine.deps.items;
    const page = [entity('e1', T, 'one'), entity('e2', T, 'two'), entity('e3', T, 'three')];
    await items.loadAll('reread', page, ulid(), 1, 1, undefined, { skipUnchanged: true });
    requests().reset();

    const again = await items.loadAll('reread', page, ulid(), 2, 1, undefined, { skipUnchanged: true });

    expect(again.map((r) => r.status)).toEqual(['unchanged', 'unchanged', 'unchanged']);
    expect(requests().count('UpdateItem', ITEMS)).toBe(0);
    expect(requests().count('BatchGetItem', ITEMS)).toBe(1);

    requests().reset();
    const edited = [page[0]!, entity('e2', LATER, 'two, edited'), page[2]!];
    const results = await items.loadAll('reread', edited, ulid(), 3, 1, undefined, { skipUnchanged: true });
    expect(results.map((r) => r.status)).toEqual(['unchanged', 'written', 'unchanged']);
    expect(requests().count('UpdateItem', ITEMS)).toBe(1);
    expect((await items.get('reread', 'e2'))?.data).toEqual({ title: 'two, edited' });
  });

  it('never writes an older version over a newer one, even when a stale read says it is not stored', async () => {
    const items = engine.deps.items;
    await items.load('stale', entity('e1', LATER, 'newer'), ulid(), 1, 1);
    requests().reset();

    // An eventually consistent read that has not seen the item yet: the write it chooses is refused.
    const result = await items.load('stale', entity('e1', T, 'older'), ulid(), 2, 1, undefined, {
      stored: null,
      skipUnchanged: true,
    });

    expect(result.status).toBe('kept_newer');
    expect((await items.get('stale', 'e1'))?.data).toEqual({ title: 'newer' });
    // And the read showing the newer version stored spares the write altogether.
    requests().reset();
    const read = await items.loadAll('stale', [entity('e1', T, 'older')], ulid(), 3, 1, undefined, {
      skipUnchanged: true,
    });
    expect(read[0]?.status).toBe('kept_newer');
    expect(requests().count('UpdateItem', ITEMS)).toBe(0);
  });

  it('leaves a fenced worker (an older epoch) unable to write, whatever its read said', async () => {
    const items = engine.deps.items;
    const run = ulid();
    await items.load('fenced', entity('e1', T, 'current epoch'), run, 1, 2);

    // The zombie of epoch 1 read before epoch 2 wrote: "not stored", then "stored, other content".
    const absent = await items.load('fenced', entity('e1', T, 'zombie'), run, 2, 1, undefined, {
      stored: null,
      skipUnchanged: true,
    });
    const older = await items.load('fenced', entity('e1', T, 'zombie'), run, 3, 1, undefined, {
      stored: { version: T, contentHash: contentHashOf(entity('e1', T, 'earlier')) },
      skipUnchanged: true,
    });

    expect([absent.status, older.status]).toEqual(['kept_newer', 'kept_newer']);
    expect((await items.get('fenced', 'e1'))?.data).toEqual({ title: 'current epoch' });
  });

  it('rewrites an unchanged entity when skipping is not allowed (a run past its first epoch)', async () => {
    const items = engine.deps.items;
    const page = [entity('e1', T, 'one')];
    await items.loadAll('no-skip', page, ulid(), 1, 1, undefined, { skipUnchanged: true });
    requests().reset();

    const results = await items.loadAll('no-skip', page, ulid(), 2, 2, undefined, { skipUnchanged: false });

    expect(results).toEqual([{ entityId: 'e1', status: 'written', changed: false }]);
    expect(requests().count('UpdateItem', ITEMS)).toBe(1);
  });
});

describe('a second full run over unchanged entities', () => {
  it('reads each page once and writes no item', async () => {
    const fake = await startFake({ entities: 12, pageSize: 5, seed: 11, profile: 'none' });
    await putSource(engine.deps, 'rerun', 'rest-json', fakeRestConfig(fake.url));
    expect((await runToEnd('rerun', 'full')).state).toBe('succeeded');
    requests().reset();

    const second = await runToEnd('rerun', 'full');

    expect(second.state).toBe('succeeded');
    expect(second.progress.processed).toBe(12);
    expect(requests().count('UpdateItem', ITEMS)).toBe(0);
    // One read per page with entities (an empty page reads nothing).
    expect(requests().count('BatchGetItem', ITEMS)).toBeGreaterThanOrEqual(1);
    expect(requests().count('BatchGetItem', ITEMS)).toBeLessThanOrEqual(second.progress.pages);
    expect(await engine.deps.items.listAll('rerun')).toHaveLength(12);
  });
});
