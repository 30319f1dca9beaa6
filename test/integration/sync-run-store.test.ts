import { ulid } from 'ulid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { destroyAwsClients } from '../../lib/aws/clients.js';
import type { SyncRun } from '../../lib/run/model.js';
import type { ChainRef } from '../../lib/store/chain-item.js';
import { ChainStore } from '../../lib/store/chains.js';
import { DeadLetterStore } from '../../lib/store/dead-letters.js';
import {
  DuplicatePageError,
  LockNotHeldError,
  PageOutOfOrderError,
  RunCancelledError,
  RunExistsError,
  RunFencedError,
  RunFinishedError,
  RunNotFoundError,
  RunStateError,
  SourceBusyError,
} from '../../lib/store/errors.js';
import { RunLifecycle } from '../../lib/store/lifecycle.js';
import { SourceStore } from '../../lib/store/sources.js';
import { SyncRunStore } from '../../lib/store/sync-runs.js';
import { setUpTestAws, type TestAws } from '../support/aws.js';
import { newRun } from '../support/runs.js';

let aws: TestAws;
let runs: SyncRunStore;
let chains: ChainStore;
let sources: SourceStore;
let lifecycle: RunLifecycle;
const T0 = 1_700_000_000_000;

beforeAll(async () => {
  aws = await setUpTestAws('store');
  runs = new SyncRunStore(aws.clients.doc, aws.names.syncRunsTable);
  chains = new ChainStore(aws.clients.doc, runs);
  sources = new SourceStore(aws.clients.doc, aws.names.sourcesTable);
  lifecycle = new RunLifecycle(
    aws.clients.doc,
    runs,
    sources,
    new DeadLetterStore(aws.clients.doc, aws.names.deadLettersTable),
  );
});
afterAll(() => destroyAwsClients(aws.clients));

async function newSource(): Promise<string> {
  const sourceId = `src-${ulid().toLowerCase()}`;
  await sources.put(
    { sourceId, connector: 'rest-json', config: { baseUrl: 'http://x' }, schedules: [], configHash: 'h1' },
    T0,
  );
  return sourceId;
}

/** A queued run on a fresh source, its lock held. */
async function queuedRun(): Promise<SyncRun> {
  return lifecycle.createHoldingLock(
    newRun({ runId: ulid(), sourceId: await newSource(), mode: 'incremental', params: {}, now: T0 }),
  );
}

/**
 * The two kinds of page chain: the run's own (a run read as one stream) and a partition's (the
 * first of a run planned into two windows). Every chain intent is tested on both.
 */
const KINDS = [
  {
    kind: "the run's own chain",
    partitions: 0,
    async prepare(run: SyncRun): Promise<ChainRef> {
      return { runId: run.runId };
    },
    /** The chain's position in the model. */
    position: (run: SyncRun) => run,
  },
  {
    kind: "a partition's chain",
    partitions: 2,
    async prepare(run: SyncRun): Promise<ChainRef> {
      await chains.claim({ runId: run.runId }, 1, 1, T0 + 1);
      await chains.plan({
        runId: run.runId,
        epoch: 1,
        windows: [
          { from: null, until: '2024-01-01T00:00:00Z' },
          { from: '2024-01-01T00:00:00Z', until: null },
        ],
        total: 1_000,
        now: T0 + 1,
      });
      return { runId: run.runId, partition: 0 };
    },
    position: (run: SyncRun) => run.partitions!['0']!,
  },
] as const;

describe.each(KINDS)('$kind', ({ partitions, prepare, position }) => {
  /** A running run with one page of the chain committed, so it has a checkpoint to protect. */
  async function withCheckpoint(): Promise<{ run: SyncRun; ref: ChainRef }> {
    const queued = await queuedRun();
    await runs.start(queued.runId, 1, T0 + 1);
    const ref = await prepare(queued);
    await chains.claim(ref, 1, 1, T0 + 2);
    await chains.commit({
      ref,
      epoch: 1,
      page: 1,
      checkpoint: { cursor: 'cursor-2', watermark: '2024-01-01T00:00:00Z' },
      processed: 100,
      errors: 2,
      now: T0 + 2,
    });
    return { run: await runs.require(queued.runId), ref };
  }

  /** The fence a reaper writes to resume the run at epoch 2, the chain at its page 2. */
  const resume = (run: SyncRun) =>
    runs.fence({
      runId: run.runId,
      epoch: 1,
      partitions,
      resume: { reason: 'resumed', from: 'checkpoint', at: T0 + 100 },
      reset: false,
      rearm:
        partitions === 0
          ? [{ page: 2 }]
          : [
              { partition: 0, page: 2 },
              { partition: 1, page: 1 },
            ],
      countRestart: true,
      now: T0 + 100,
    });

  const page2 = (ref: ChainRef, epoch: number, cursor: string | null = 'cursor-3') =>
    chains.commit({
      ref,
      epoch,
      page: 2,
      checkpoint: { cursor, watermark: null },
      processed: 5,
      errors: 0,
      now: T0 + 101,
    });

  describe('commit', () => {
    it('moves checkpoint, nextPage and counters in one write', async () => {
      const { run } = await withCheckpoint();

      expect(position(run).nextPage).toBe(2);
      expect(position(run).checkpoint).toEqual({
        cursor: 'cursor-2',
        page: 1,
        watermark: '2024-01-01T00:00:00Z',
        at: T0 + 2,
      });
      expect(run.progress).toEqual({ processed: 100, total: partitions ? 1_000 : null, pages: 1 });
      expect(run.errorCount).toBe(2);
      expect(position(run).heartbeatAt).toBe(T0 + 2);
    });

    it('lets exactly one of 20 concurrent identical commits succeed and counts progress once', async () => {
      const { run, ref } = await withCheckpoint();

      const results = await Promise.allSettled(Array.from({ length: 20 }, () => page2(ref, 1)));

      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      const refusals = results
        .filter((r) => r.status === 'rejected')
        .map((r) => (r as PromiseRejectedResult).reason);
      expect(refusals).toHaveLength(19);
      for (const refusal of refusals) expect(refusal).toBeInstanceOf(DuplicatePageError);
      const after = await runs.require(run.runId);
      expect(after.progress.processed).toBe(105);
      expect(after.progress.pages).toBe(2);
      expect(position(after).nextPage).toBe(3);
    });

    it("adds the chain's counts to the run once when its last page ends it", async () => {
      const { run, ref } = await withCheckpoint();

      await page2(ref, 1, null);
      await expect(page2(ref, 1, null)).rejects.toBeInstanceOf(DuplicatePageError);

      const after = await runs.require(run.runId);
      expect(after.progress).toMatchObject({ processed: 105, pages: 2 });
      expect(after.errorCount).toBe(2);
      if (partitions) expect(after.openPartitions).toBe(1);
    });

    it('refuses a page the chain does not expect yet', async () => {
      const { ref } = await withCheckpoint();

      await expect(
        chains.commit({
          ref,
          epoch: 1,
          page: 3,
          checkpoint: { cursor: 'x', watermark: null },
          processed: 1,
          errors: 0,
          now: T0 + 5,
        }),
      ).rejects.toBeInstanceOf(PageOutOfOrderError);
    });
  });

  describe('the other intents', () => {
    it('claim ends the handoff and refuses a page already taken', async () => {
      const { run, ref } = await withCheckpoint();

      await chains.claim(ref, 1, 2, T0 + 10);

      expect(position(await runs.require(run.runId)).handoff).toBeNull();
      await expect(chains.claim(ref, 1, 1, T0 + 11)).rejects.toBeInstanceOf(DuplicatePageError);
    });

    it('claim returns the chain as it left it, and explains a refusal from the chain it found', async () => {
      const { ref } = await withCheckpoint();

      const claimed = await chains.claim(ref, 1, 2, T0 + 10);

      expect(claimed).toMatchObject({ epoch: 1, nextPage: 2, handoff: null, heartbeatAt: T0 + 10, pages: 1 });
      expect(claimed.checkpoint).toMatchObject({ cursor: 'cursor-2', page: 1 });
      await expect(chains.claim(ref, 1, 3, T0 + 11)).rejects.toBeInstanceOf(PageOutOfOrderError);
      await expect(chains.claim(ref, 2, 2, T0 + 11)).rejects.toBeInstanceOf(RunFencedError);
    });

    it('noteSendFailed marks the current handoff only', async () => {
      const { run, ref } = await withCheckpoint();

      expect(await chains.noteSendFailed(ref, 1, 1, T0 + 10)).toBe(false);
      expect(await chains.noteSendFailed(ref, 2, 2, T0 + 10)).toBe(false);
      expect(await chains.noteSendFailed(ref, 1, 2, T0 + 10)).toBe(true);
      expect(position(await runs.require(run.runId)).handoff).toEqual({
        page: 2,
        at: T0 + 2,
        sentAt: null,
        failedAt: T0 + 10,
      });
      await chains.claim(ref, 1, 2, T0 + 11);
      expect(await chains.noteSendFailed(ref, 1, 2, T0 + 12)).toBe(false);
    });

    it('confirmSent confirms the current handoff only', async () => {
      const { run, ref } = await withCheckpoint();

      expect(await chains.confirmSent(ref, 1, 1, T0 + 10)).toBe(false);
      expect(await chains.confirmSent(ref, 1, 2, T0 + 10)).toBe(true);

      expect(position(await runs.require(run.runId)).handoff).toEqual({
        page: 2,
        at: T0 + 2,
        sentAt: T0 + 10,
      });
    });

    it('renewHandoff lets one of two renewals of the same handoff win', async () => {
      const { ref } = await withCheckpoint();

      const results = await Promise.all([
        chains.renewHandoff(ref, 1, 2, T0 + 2, T0 + 20),
        chains.renewHandoff(ref, 1, 2, T0 + 2, T0 + 21),
      ]);

      expect(results.filter(Boolean)).toHaveLength(1);
    });

    it('handBack marks the page as back on the queue, confirmed', async () => {
      const { run, ref } = await withCheckpoint();
      await chains.claim(ref, 1, 2, T0 + 10);

      expect(await chains.handBack(ref, 1, 2, T0 + 11)).toBe(true);
      expect(await chains.handBack(ref, 1, 3, T0 + 11)).toBe(false);

      expect(position(await runs.require(run.runId)).handoff).toEqual({
        page: 2,
        at: T0 + 11,
        sentAt: T0 + 11,
      });
    });

    it('defer records the pause and hands the page over again', async () => {
      const { run, ref } = await withCheckpoint();

      await chains.defer(ref, 1, 2, T0 + 10_000, T0 + 12);

      const after = position(await runs.require(run.runId));
      expect(after.deferredUntil).toBe(T0 + 10_000);
      expect(after.handoff).toEqual({ page: 2, at: T0 + 12, sentAt: null });
      await expect(chains.defer(ref, 1, 1, T0 + 10_000, T0 + 12)).rejects.toBeInstanceOf(DuplicatePageError);
    });
  });

  describe('fencing', () => {
    const zombie = {
      commit: (ref: ChainRef) => page2(ref, 1),
      claim: (ref: ChainRef) => chains.claim(ref, 1, 2, T0 + 101),
      heartbeat: (ref: ChainRef) => chains.heartbeat(ref, 1, T0 + 101),
      defer: (ref: ChainRef) => chains.defer(ref, 1, 2, T0 + 1_000, T0 + 101),
    };

    it.each(Object.keys(zombie) as (keyof typeof zombie)[])(
      'refuses a %s carrying an old epoch',
      async (write) => {
        const { run, ref } = await withCheckpoint();
        await resume(run);

        await expect(zombie[write](ref)).rejects.toBeInstanceOf(RunFencedError);
        const after = await runs.require(run.runId);
        expect(after.state).toBe('running');
        expect(after.epoch).toBe(2);
        expect(after.progress.processed).toBe(100);
      },
    );

    it.each(['confirmSent', 'renewHandoff', 'handBack'] as const)(
      'answers false to a %s carrying an old epoch',
      async (write) => {
        const { ref, run } = await withCheckpoint();
        await resume(run);

        const answer = {
          confirmSent: () => chains.confirmSent(ref, 1, 2, T0 + 101),
          renewHandoff: () => chains.renewHandoff(ref, 1, 2, T0 + 100, T0 + 101),
          handBack: () => chains.handBack(ref, 1, 2, T0 + 101),
        }[write];

        expect(await answer()).toBe(false);
      },
    );

    it('refuses a finish carrying an old epoch', async () => {
      const { run } = await withCheckpoint();
      await resume(run);

      await expect(
        lifecycle.finish({
          runId: run.runId,
          sourceId: run.sourceId,
          epoch: 1,
          state: 'succeeded',
          now: T0 + 101,
        }),
      ).rejects.toBeInstanceOf(RunFencedError);
    });

    it('accepts the same writes from the new epoch', async () => {
      const { run, ref } = await withCheckpoint();
      const epoch = await resume(run);

      await chains.claim(ref, epoch, 2, T0 + 101);
      await chains.heartbeat(ref, epoch, T0 + 101);
      await page2(ref, epoch);

      const after = await runs.require(run.runId);
      expect(after.progress.processed).toBe(105);
      expect(after.restarts).toBe(1);
      expect(after.resume.reason).toBe('resumed');
    });

    it('lets only one of three concurrent fences win', async () => {
      const { run } = await withCheckpoint();

      const results = await Promise.allSettled([resume(run), resume(run), resume(run)]);

      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      expect((await runs.require(run.runId)).epoch).toBe(2);
    });
  });

  describe('the checkpoint is monotonic', () => {
    const writes: Record<string, (run: SyncRun, ref: ChainRef) => Promise<unknown>> = {
      heartbeat: (_run, ref) => chains.heartbeat(ref, 1, T0 + 50),
      defer: (_run, ref) => chains.defer(ref, 1, 2, T0 + 10_000, T0 + 50),
      resume: (run) => resume(run),
      finish: (run) =>
        lifecycle.finish({
          runId: run.runId,
          sourceId: run.sourceId,
          epoch: 1,
          state: 'failed',
          failure: { reason: 'page_failed', message: 'boom' },
          now: T0 + 50,
        }),
      cancel: (run) => lifecycle.cancel(run.runId, T0 + 50),
    };

    it.each(Object.keys(writes))('%s neither replaces nor erases the checkpoint', async (name) => {
      const { run, ref } = await withCheckpoint();

      await writes[name]!(run, ref);

      expect(position(await runs.require(run.runId)).checkpoint).toEqual(position(run).checkpoint);
    });

    it('a later page commit does move it', async () => {
      const { run, ref } = await withCheckpoint();

      await page2(ref, 1);

      const after = position(await runs.require(run.runId));
      expect(after.checkpoint).toMatchObject({ cursor: 'cursor-3', page: 2 });
    });
  });

  describe('cancel and the end of the run', () => {
    it('make the next heartbeat and commit fail as cancelled, and release the lock', async () => {
      const { run, ref } = await withCheckpoint();

      await lifecycle.cancel(run.runId, T0 + 10);

      await expect(chains.heartbeat(ref, 1, T0 + 11)).rejects.toBeInstanceOf(RunCancelledError);
      await expect(page2(ref, 1, null)).rejects.toBeInstanceOf(RunCancelledError);
      expect(await chains.confirmSent(ref, 1, 2, T0 + 11)).toBe(false);
      expect((await sources.require(run.sourceId)).activeRunId).toBeNull();
      expect((await runs.require(run.runId)).state).toBe('cancelled');
    });

    it('a failed finish stops every chain: later writes are refused as finished', async () => {
      const { run, ref } = await withCheckpoint();

      await lifecycle.finish({
        runId: run.runId,
        sourceId: run.sourceId,
        epoch: 1,
        state: 'failed',
        failure: { reason: 'x', message: 'y' },
        now: T0 + 10,
      });

      await expect(chains.claim(ref, 1, 2, T0 + 11)).rejects.toBeInstanceOf(RunFinishedError);
      await expect(page2(ref, 1)).rejects.toBeInstanceOf(RunFinishedError);
      expect((await runs.require(run.runId)).progress.processed).toBe(100);
    });
  });
});

describe('a run restarted from scratch', () => {
  it('forgets its partitions and starts its own chain again at page 1', async () => {
    const { run } = await (async () => {
      const queued = await queuedRun();
      await runs.start(queued.runId, 1, T0 + 1);
      const ref = await KINDS[1].prepare(queued);
      await chains.claim(ref, 1, 1, T0 + 2);
      return { run: await runs.require(queued.runId) };
    })();

    const epoch = await runs.fence({
      runId: run.runId,
      epoch: 1,
      partitions: 2,
      resume: { reason: 'checkpoint_stale', from: 'scratch', at: T0 + 50 },
      reset: true,
      rearm: [{ page: 1 }],
      countRestart: true,
      now: T0 + 50,
    });

    const after = await runs.require(run.runId);
    expect(after.partitions).toBeUndefined();
    expect(after.nextPage).toBe(1);
    expect(after.handoff).toEqual({ page: 1, at: T0 + 50, sentAt: null });
    await chains.heartbeat({ runId: run.runId }, epoch, T0 + 51);
    await expect(chains.heartbeat({ runId: run.runId, partition: 0 }, epoch, T0 + 51)).rejects.toBeInstanceOf(
      RunStateError,
    );
  });
});

describe('create', () => {
  it('refuses a run id already in use, and leaves that run as it was', async () => {
    const run = await queuedRun();
    await runs.start(run.runId, 1, T0 + 1);

    await expect(
      runs.create(newRun({ runId: run.runId, sourceId: run.sourceId, now: T0 + 5 })),
    ).rejects.toBeInstanceOf(RunExistsError);
    expect(await runs.require(run.runId)).toMatchObject({ state: 'running', startedAt: T0 + 1 });
  });
});

describe('cancel', () => {
  it('cannot start or resume a cancelled run', async () => {
    const run = await queuedRun();
    await lifecycle.cancel(run.runId, T0 + 1);

    await expect(runs.start(run.runId, 1, T0 + 2)).rejects.toBeInstanceOf(RunCancelledError);
    await expect(
      runs.fence({
        runId: run.runId,
        epoch: 1,
        partitions: 0,
        resume: { reason: 'resumed', from: 'checkpoint', at: T0 },
        reset: false,
        rearm: [{ page: 2 }],
        countRestart: true,
        now: T0 + 2,
      }),
    ).rejects.toBeInstanceOf(RunCancelledError);
    expect((await runs.require(run.runId)).state).toBe('cancelled');
  });

  it('refuses to cancel a finished run', async () => {
    const run = await queuedRun();
    await runs.start(run.runId, 1, T0 + 1);
    await lifecycle.finish({
      runId: run.runId,
      sourceId: run.sourceId,
      epoch: 1,
      state: 'succeeded',
      now: T0 + 5,
    });

    await expect(lifecycle.cancel(run.runId, T0 + 6)).rejects.toBeInstanceOf(RunFinishedError);
  });
});

describe('the source lock', () => {
  it('reports the active run id to a second acquisition', async () => {
    const sourceId = await newSource();
    await sources.acquireLock(sourceId, 'run-a', T0);

    const second = sources.acquireLock(sourceId, 'run-b', T0);

    await expect(second).rejects.toBeInstanceOf(SourceBusyError);
    await expect(second).rejects.toMatchObject({ activeRunId: 'run-a' });
  });

  it('refuses release by a non-holder and accepts it from the holder', async () => {
    const sourceId = await newSource();
    await sources.acquireLock(sourceId, 'run-a', T0);

    await expect(sources.releaseLock(sourceId, 'run-b')).rejects.toBeInstanceOf(LockNotHeldError);
    expect((await sources.require(sourceId)).activeRunId).toBe('run-a');
    await sources.releaseLock(sourceId, 'run-a');
    expect((await sources.require(sourceId)).activeRunId).toBeNull();
  });

  it('is taken together with the run: a second run on a busy source is not created', async () => {
    const sourceId = await newSource();
    const first = await lifecycle.createHoldingLock({
      runId: ulid(),
      sourceId,
      mode: 'full',
      params: {},
      paramsHash: 'p',
      resume: { reason: 'fresh_start', from: 'scratch', at: T0 },
      now: T0,
    });
    const secondId = ulid();

    await expect(
      lifecycle.createHoldingLock({
        runId: secondId,
        sourceId,
        mode: 'full',
        params: {},
        paramsHash: 'p',
        resume: { reason: 'fresh_start', from: 'scratch', at: T0 },
        now: T0,
      }),
    ).rejects.toMatchObject({ name: 'SourceBusyError', activeRunId: first.runId });
    expect(await runs.get(secondId)).toBeUndefined();
  });

  it('is released, with the new watermark, when a run succeeds', async () => {
    const run = await queuedRun();
    await runs.start(run.runId, 1, T0 + 1);

    await lifecycle.finish({
      runId: run.runId,
      sourceId: run.sourceId,
      epoch: 1,
      state: 'succeeded',
      watermark: { value: '2024-01-01T00:00:00Z', stream: 'stream-a' },
      now: T0 + 9,
    });

    const source = await sources.require(run.sourceId);
    expect(source.activeRunId).toBeNull();
    expect(source.watermark).toBe('2024-01-01T00:00:00Z');
    expect(source.watermarkStream).toBe('stream-a');
    expect((await runs.listActive()).map((r) => r.runId)).not.toContain(run.runId);
  });

  it('keeps the watermark when a run fails', async () => {
    const run = await queuedRun();

    await lifecycle.finish({
      runId: run.runId,
      sourceId: run.sourceId,
      epoch: 1,
      state: 'failed',
      failure: { reason: 'x', message: 'y' },
      watermark: { value: '2099-01-01T00:00:00Z', stream: 'stream-a' },
      now: T0 + 9,
    });

    const source = await sources.require(run.sourceId);
    expect(source.activeRunId).toBeNull();
    expect(source.watermark).toBeNull();
  });
});

describe('listSilent', () => {
  it('finds active runs whose run item was not written since the threshold', async () => {
    const silent = await queuedRun();

    const found = (await runs.listSilent(T0 + 100)).map((r) => r.runId);

    expect(found).toContain(silent.runId);
    expect(await runs.listSilent(T0)).not.toContainEqual(expect.objectContaining({ runId: silent.runId }));
  });
});

describe('the item dead-letter flag', () => {
  it('is set on the run, and refused for a run that does not exist', async () => {
    const run = await queuedRun();
    expect(run.itemDeadLetters).toBeUndefined();

    await runs.markItemDeadLetters(run.runId);

    expect((await runs.require(run.runId)).itemDeadLetters).toBe(true);
    await expect(runs.markItemDeadLetters(ulid())).rejects.toBeInstanceOf(RunNotFoundError);
  });
});
