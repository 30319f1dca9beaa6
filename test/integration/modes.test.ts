import { describe, expect, it } from 'vitest';
import { startRun } from '../../lib/engine/index.js';
import type { FakeSourceOptions } from '../../tools/fake-source/index.js';
import { CrashHooks } from '../support/crash.js';
import { fakeRestConfig, putSource, useEngineWithFakes, waitForRun } from '../support/harness.js';

const hooks = new CrashHooks();
const { engine, startFake, runToEnd } = useEngineWithFakes('modes', { hooks, heartbeatIntervalMs: 200 });
let counter = 0;

async function newSource(entities: number, profile: FakeSourceOptions['profile'] = 'none', pageSize = 100) {
  const fake = await startFake({ entities, seed: 500 + counter, profile });
  const sourceId = `modes-${++counter}`;
  await putSource(engine.deps, sourceId, 'rest-json', fakeRestConfig(fake.url, { pageSize }));
  return { sourceId, fake };
}

describe('incremental runs and the watermark', () => {
  it('moves the watermark only on success and picks up entities modified since', async () => {
    const { sourceId, fake } = await newSource(60, 'none', 20);

    const first = await runToEnd(sourceId, 'incremental');
    const afterFirst = (await engine.deps.sources.require(sourceId)).watermark;
    expect(first.state).toBe('succeeded');
    expect(afterFirst).toBe(fake.truth().entities.at(-1)!.updatedAt);

    // A failing incremental run leaves the watermark where it was.
    fake.control.touch(['e-000010', 'e-000020']);
    fake.control.setProfile({ forceStatus: 401 });
    const failed = await runToEnd(sourceId, 'incremental');
    expect(failed.state).toBe('failed');
    expect((await engine.deps.sources.require(sourceId)).watermark).toBe(afterFirst);

    // The next successful run reads only what changed since, and moves the watermark.
    fake.control.setProfile('none');
    const second = await runToEnd(sourceId, 'incremental');
    expect(second.state).toBe('succeeded');
    // It asks from the watermark minus the 5 s lookback: the six entities modified in [W − 5 s, W]
    // (one a second) are read again, with the two touched since.
    expect(second.params.since).toBe(new Date(Date.parse(afterFirst!) - 5_000).toISOString());
    expect(second.params.watermark).toBe(afterFirst);
    expect(second.progress.processed).toBe(8);
    const touched = fake.truth().entities.filter((e) => e.id === 'e-000010' || e.id === 'e-000020');
    for (const entity of touched) {
      expect((await engine.deps.items.get(sourceId, entity.id))?.version).toBe(entity.updatedAt);
    }
    expect((await engine.deps.sources.require(sourceId)).watermark).toBe(
      fake.truth().entities.at(-1)!.updatedAt,
    );
  });

  it('sets the watermark with a successful full run over a keyed stream: it read everything', async () => {
    const { sourceId, fake } = await newSource(40);

    await runToEnd(sourceId, 'full');

    expect((await engine.deps.sources.require(sourceId)).watermark).toBe(
      fake.truth().entities.at(-1)!.updatedAt,
    );
  });

  it('never sets a watermark from a stream that cannot be keyed (positional pages, no since filter)', async () => {
    const { sourceId, fake } = await newSource(40);
    const positional = fakeRestConfig(fake.url, {
      url: `${fake.url}/records-paged`,
      sinceParam: undefined,
      pagination: { type: 'page' },
    });
    await putSource(engine.deps, sourceId, 'rest-json', positional);

    const full = await runToEnd(sourceId, 'full');
    const incremental = await runToEnd(sourceId, 'incremental');

    expect(full.state).toBe('succeeded');
    expect(incremental.state).toBe('succeeded');
    // The incremental run read everything, and said why.
    expect(incremental.resume.reason).toBe('stream_unordered');
    expect(incremental.progress.processed).toBe(40);
    expect((await engine.deps.sources.require(sourceId)).watermark).toBeNull();
  });
});

describe('reconciliation', () => {
  it('tombstones exactly the entities deleted at the source', async () => {
    const { sourceId, fake } = await newSource(60, 'none', 20);
    await runToEnd(sourceId, 'full');
    fake.control.delete(['e-000003', 'e-000030', 'e-000060']);

    const run = await runToEnd(sourceId, 'reconciliation');

    expect(run.state).toBe('succeeded');
    const items = await engine.deps.items.listAll(sourceId);
    const tombstoned = items.filter((i) => i.tombstonedAt !== undefined).map((i) => i.entityId);
    expect(tombstoned.sort()).toEqual(['e-000003', 'e-000030', 'e-000060']);
    expect(items.filter((i) => i.tombstonedAt === undefined)).toHaveLength(57);
    expect(run.progress.tombstoned).toBe(3);
  });

  it('tombstones nothing when a page of the listing failed', async () => {
    const { sourceId, fake } = await newSource(60, 'none', 20);
    await runToEnd(sourceId, 'full');
    fake.control.delete(['e-000004']);
    fake.control.setProfile({ perPathOverrides: { '/records': { forceStatus: 403 } } });

    const run = await runToEnd(sourceId, 'reconciliation');

    expect(run.state).toBe('failed');
    const items = await engine.deps.items.listAll(sourceId);
    expect(items.filter((i) => i.tombstonedAt !== undefined)).toEqual([]);
  });
});

describe('retry failed', () => {
  it('loads the entries once the source is fixed and empties dead_letters', async () => {
    const { sourceId, fake } = await newSource(60, { invalidRecords: 10 }, 20);
    const first = await runToEnd(sourceId, 'full');
    expect(first.errorCount).toBe(10);
    const invalid = [...fake.truth().invalidIds];
    fake.control.fix();

    const retry = await runToEnd(sourceId, 'dlq_retry');

    expect(retry).toMatchObject({ state: 'succeeded', errorCount: 0 });
    expect(retry.progress.processed).toBe(10);
    expect(await engine.deps.deadLetters.listAll(sourceId)).toEqual([]);
    for (const id of invalid) expect(await engine.deps.items.get(sourceId, id)).toBeDefined();
    expect(await engine.deps.items.listAll(sourceId)).toHaveLength(60);
  });

  it('keeps the entries that still fail, with their history', async () => {
    const { sourceId, fake } = await newSource(60, { invalidRecords: 10 }, 20);
    await runToEnd(sourceId, 'full');
    const invalid = [...fake.truth().invalidIds].sort();
    const stillBroken = invalid.slice(0, 3);
    fake.control.fix(invalid.slice(3));
    const before = await engine.deps.deadLetters.listAll(sourceId);

    const retry = await runToEnd(sourceId, 'dlq_retry');

    expect(retry).toMatchObject({ state: 'succeeded', errorCount: 3 });
    const after = await engine.deps.deadLetters.listAll(sourceId);
    expect(after.map((e) => e.ref).sort()).toEqual(stillBroken);
    for (const entry of after) {
      const earlier = before.find((e) => e.entryId === entry.entryId)!;
      expect(entry.attempts).toBe(earlier.attempts + 1);
      expect(entry.firstFailedAt).toBe(earlier.firstFailedAt);
      expect(entry.runId).toBe(retry.runId);
    }
  });
});

describe('cancel', () => {
  it('stops the worker within one heartbeat; the next run starts from scratch', async () => {
    // Ten pages of 10: cancelled after two, it has most of its pages still to go.
    const { sourceId, fake } = await newSource(100, 'none', 10);
    const started = await startRun(engine.deps, { sourceId, mode: 'incremental' });
    await waitForRun(engine.deps, started.runId, (r) => r.progress.pages >= 2);

    await engine.deps.lifecycle.cancel(started.runId, Date.now());
    const pagesAtCancel = (await engine.deps.runs.require(started.runId)).progress.pages;
    await new Promise((resolve) => setTimeout(resolve, 1_500));

    const cancelled = await engine.deps.runs.require(started.runId);
    expect(cancelled.state).toBe('cancelled');
    expect(cancelled.progress.pages).toBeLessThanOrEqual(pagesAtCancel + 1);
    const served = fake.stats().sourceRequests;
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(fake.stats().sourceRequests).toBe(served);

    const next = await runToEnd(sourceId, 'incremental');
    expect(next.resume.reason).toBe('fresh_start');
    expect(next.params.since).toBeNull();
    expect(next.progress.processed).toBe(100);
  });
});
