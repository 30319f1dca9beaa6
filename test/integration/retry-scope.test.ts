import { beforeAll, describe, expect, it } from 'vitest';
import { RELIABILITY } from '../../lib/config/constants.js';
import type { EngineDeps } from '../../lib/engine/index.js';
import { drainDeadMessage, processPage, startRun } from '../../lib/engine/index.js';
import { DEAD_LETTER_RETRY_PAGE_SIZE } from '../../lib/engine/work/dead-letter-retry.js';
import { isTerminal, type RunMode, type SyncRun } from '../../lib/run/model.js';
import { type FakeSource, startFakeSource } from '../../tools/fake-source/index.js';
import { fakeRestConfig, putSource, useEngineWithFakes } from '../support/harness.js';
import { takePageMessages } from '../support/page-messages.js';

/*
 * Retry-failed keeps the original scope (issue 10): a page that failed in an incremental run is
 * retried with that run's `since`, so the entities it held are refreshed — not the first page of
 * today's unfiltered listing.
 */

let fake: FakeSource;

const { engine, startFake } = useEngineWithFakes('retryscope', { workers: 0 });
beforeAll(async () => {
  fake = await startFake({ entities: 300, seed: 12 });
});

/** Receives and deletes every page message now visible in the queue. */
const takeMessages = () => takePageMessages(engine.aws);

/** Runs `mode` on `sourceId` (or carries on with run `runId`) to its end, delivering its page messages by hand. */
async function runToEnd(sourceId: string, mode: RunMode, runId?: string): Promise<SyncRun> {
  const id = runId ?? (await startRun(engine.deps, { sourceId, mode })).runId;
  for (let round = 0; round < 50; round++) {
    const run = await engine.deps.runs.require(id);
    if (isTerminal(run.state)) return run;
    for (const message of await takeMessages()) {
      if (message.runId === id) await processPage(engine.deps, message);
    }
  }
  throw new Error(`run ${id} did not end`);
}

describe('retry-failed of an incremental run’s failed page', () => {
  it('fetches it with the original run’s since, so the entities it held are brought up to date', async () => {
    const sourceId = 'retry-scope';
    await putSource(engine.deps, sourceId, 'rest-json', fakeRestConfig(fake.url));
    expect((await runToEnd(sourceId, 'full')).state).toBe('succeeded');
    const touched = fake.control.touch([5, 17, 42, 99, 150, 222, 280]).changed;

    // The incremental run's first page fails for good: it cannot continue past it.
    fake.control.setProfile({ perPathOverrides: { '/records': { forceStatus: 400 } } });
    const incremental = await runToEnd(sourceId, 'incremental');
    expect(incremental.failure?.reason).toBe('page_failed');
    const [entry] = (await engine.deps.deadLetters.listAll(sourceId)).filter((e) => e.kind === 'page');
    expect(entry?.scope).toMatchObject({ mode: 'incremental', since: expect.any(String) });

    fake.control.setProfile('none');
    const retry = await runToEnd(sourceId, 'dlq_retry');

    expect(retry.state).toBe('succeeded');
    for (const entity of touched) {
      expect((await engine.deps.items.get(sourceId, entity.id))?.version).toBe(entity.updatedAt);
    }
    expect(await engine.deps.deadLetters.listAll(sourceId)).toEqual([]);
  });
});

/** The engine with a worker bug on every page of `runId`, after its items were loaded. */
function poisoned(runId: string): EngineDeps {
  return {
    ...engine.deps,
    hooks: {
      at(point, context) {
        if (point === 'afterLoad' && context.runId === runId) throw new Error('worker bug on this page');
      },
    },
  };
}

describe('a retry-failed page that the page queue gave up on', () => {
  it('is filed under the entries it was retrying, not as a source page, and the run continues past it', async () => {
    const sourceId = 'retry-poison';
    const broken = await startFakeSource({ entities: 120, seed: 31, profile: { invalidRecords: 8 } });
    try {
      await putSource(engine.deps, sourceId, 'rest-json', fakeRestConfig(broken.url));
      expect((await runToEnd(sourceId, 'full')).errorCount).toBe(8);
      broken.control.fix();
      const before = await engine.deps.deadLetters.listAll(sourceId);
      const { runId } = await startRun(engine.deps, { sourceId, mode: 'dlq_retry' });
      const [first] = (await takeMessages()).filter((m) => m.runId === runId);
      expect(first).toMatchObject({ page: 1 });

      // Its first slice keeps failing on every delivery, so SQS moves it to the page DLQ.
      await expect(processPage(poisoned(runId), first!)).rejects.toThrow('worker bug');
      const drained = await drainDeadMessage(engine.deps, JSON.stringify(first), RELIABILITY.maxReceiveCount);

      const after = await engine.deps.deadLetters.listAll(sourceId);
      expect(after.filter((e) => e.kind === 'page')).toEqual([]);
      expect(drained.outcome).toBe('continued');
      const slice = before.slice(0, DEAD_LETTER_RETRY_PAGE_SIZE);
      expect(after.map((e) => e.entryId).sort()).toEqual(before.map((e) => e.entryId).sort());
      for (const entry of slice) {
        expect(after.find((e) => e.entryId === entry.entryId)).toMatchObject({
          kind: entry.kind,
          ref: entry.ref,
          runId,
          attempts: entry.attempts + 1,
          reason: expect.stringContaining('poison'),
        });
      }
      // The next slice is delivered and retried as usual; the poisoned entries stay open.
      const run = await runToEnd(sourceId, 'dlq_retry', runId);
      expect(run).toMatchObject({ state: 'succeeded', errorCount: slice.length });
      expect(run.progress.processed).toBe(before.length - slice.length);
      const open = await engine.deps.deadLetters.listAll(sourceId);
      expect(open.map((e) => e.entryId).sort()).toEqual(slice.map((e) => e.entryId).sort());
    } finally {
      await broken.stop();
    }
  });

  it('ends the run, fixing nothing, with its entries still open when the poisoned slice was the last', async () => {
    const sourceId = 'retry-poison-last';
    const broken = await startFakeSource({ entities: 60, seed: 32, profile: { invalidRecords: 3 } });
    try {
      await putSource(engine.deps, sourceId, 'rest-json', fakeRestConfig(broken.url));
      expect((await runToEnd(sourceId, 'full')).errorCount).toBe(3);
      const before = await engine.deps.deadLetters.listAll(sourceId);
      const { runId } = await startRun(engine.deps, { sourceId, mode: 'dlq_retry' });
      const [first] = (await takeMessages()).filter((m) => m.runId === runId);
      await expect(processPage(poisoned(runId), first!)).rejects.toThrow('worker bug');

      const drained = await drainDeadMessage(engine.deps, JSON.stringify(first), RELIABILITY.maxReceiveCount);

      expect(drained.outcome).toBe('continued');
      const run = await engine.deps.runs.require(runId);
      // Every entry it was to retry is still failing: not a success (never the source's last ok run).
      expect(run).toMatchObject({
        state: 'failed',
        failure: { reason: 'retry_fixed_nothing' },
        errorCount: 3,
        progress: { processed: 0 },
        outcome: { processed: 0, failed: 3, deadLetters: 3 },
      });
      expect((await engine.deps.sources.require(sourceId)).activeRunId).toBeNull();
      const open = await engine.deps.deadLetters.listAll(sourceId);
      expect(open.map((e) => [e.kind, e.ref, e.runId])).toEqual(before.map((e) => [e.kind, e.ref, runId]));
    } finally {
      await broken.stop();
    }
  });
});
