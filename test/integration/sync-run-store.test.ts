import { ulid } from 'ulid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { destroyAwsClients } from '../../lib/aws/clients.js';
import type { SyncRun } from '../../lib/run/model.js';
import {
  DuplicatePageError,
  LockNotHeldError,
  RunCancelledError,
  RunFencedError,
  RunFinishedError,
  SourceBusyError,
} from '../../lib/store/errors.js';
import { RunLifecycle } from '../../lib/store/lifecycle.js';
import { SourceStore } from '../../lib/store/sources.js';
import { SyncRunStore } from '../../lib/store/sync-runs.js';
import { setUpTestAws, type TestAws } from '../support/aws.js';

let aws: TestAws;
let runs: SyncRunStore;
let sources: SourceStore;
let lifecycle: RunLifecycle;
const T0 = 1_700_000_000_000;

beforeAll(async () => {
  aws = await setUpTestAws('store');
  runs = new SyncRunStore(aws.clients.doc, aws.names.syncRunsTable);
  sources = new SourceStore(aws.clients.doc, aws.names.sourcesTable);
  lifecycle = new RunLifecycle(aws.clients.doc, runs, sources);
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

/** A running run with one page committed, so it has a checkpoint to protect. */
async function runningRunWithCheckpoint(): Promise<SyncRun> {
  const sourceId = await newSource();
  const run = await lifecycle.createHoldingLock({
    runId: ulid(),
    sourceId,
    mode: 'incremental',
    params: {},
    paramsHash: 'p1',
    resume: { reason: 'fresh_start', from: 'scratch', at: T0 },
    now: T0,
  });
  await runs.start(run.runId, 1, T0 + 1);
  await runs.commitPage({
    runId: run.runId,
    epoch: 1,
    page: 1,
    checkpoint: { cursor: 'cursor-2', watermark: '2024-01-01T00:00:00Z' },
    processed: 100,
    errors: 2,
    total: 1_000,
    now: T0 + 2,
  });
  return runs.require(run.runId);
}

describe('SyncRunStore.commitPage', () => {
  it('moves checkpoint, nextPage and counters in one write', async () => {
    const run = await runningRunWithCheckpoint();

    expect(run.nextPage).toBe(2);
    expect(run.checkpoint).toEqual({
      cursor: 'cursor-2',
      page: 1,
      watermark: '2024-01-01T00:00:00Z',
      at: T0 + 2,
    });
    expect(run.progress).toEqual({ processed: 100, total: 1_000, pages: 1 });
    expect(run.errorCount).toBe(2);
    expect(run.heartbeatAt).toBe(T0 + 2);
  });

  it('lets exactly one of 20 concurrent identical commits succeed and counts progress once', async () => {
    const run = await runningRunWithCheckpoint();
    const commit = () =>
      runs.commitPage({
        runId: run.runId,
        epoch: 1,
        page: 2,
        checkpoint: { cursor: 'cursor-3', watermark: null },
        processed: 100,
        errors: 1,
        now: T0 + 10,
      });

    const results = await Promise.allSettled(Array.from({ length: 20 }, commit));

    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const refusals = results
      .filter((r) => r.status === 'rejected')
      .map((r) => (r as PromiseRejectedResult).reason);
    expect(refusals).toHaveLength(19);
    for (const refusal of refusals) expect(refusal).toBeInstanceOf(DuplicatePageError);
    const after = await runs.require(run.runId);
    expect(after.progress.processed).toBe(200);
    expect(after.progress.pages).toBe(2);
    expect(after.errorCount).toBe(3);
    expect(after.nextPage).toBe(3);
  });
});

describe('fencing', () => {
  it.each(['commit', 'heartbeat', 'finish'] as const)('refuses a %s carrying an old epoch', async (write) => {
    const run = await runningRunWithCheckpoint();
    await runs.fence({
      runId: run.runId,
      epoch: 1,
      resume: { reason: 'resumed', from: 'checkpoint', at: T0 + 100 },
      reset: false,
      countRestart: true,
      page: 2,
      now: T0 + 100,
    });

    const zombie = {
      commit: () =>
        runs.commitPage({
          runId: run.runId,
          epoch: 1,
          page: 2,
          checkpoint: { cursor: 'x', watermark: null },
          processed: 5,
          errors: 0,
          now: T0 + 101,
        }),
      heartbeat: () => runs.heartbeat(run.runId, 1, T0 + 101),
      finish: () =>
        lifecycle.finish({
          runId: run.runId,
          sourceId: run.sourceId,
          epoch: 1,
          state: 'succeeded',
          now: T0 + 101,
        }),
    }[write];

    await expect(zombie()).rejects.toBeInstanceOf(RunFencedError);
    const after = await runs.require(run.runId);
    expect(after.state).toBe('running');
    expect(after.epoch).toBe(2);
    expect(after.progress.processed).toBe(100);
  });

  it('accepts the same writes from the new epoch', async () => {
    const run = await runningRunWithCheckpoint();
    const epoch = await runs.fence({
      runId: run.runId,
      epoch: 1,
      resume: { reason: 'resumed', from: 'checkpoint', at: T0 + 100 },
      reset: false,
      countRestart: true,
      page: 2,
      now: T0 + 100,
    });

    await runs.heartbeat(run.runId, epoch, T0 + 101);
    await runs.commitPage({
      runId: run.runId,
      epoch,
      page: 2,
      checkpoint: { cursor: null, watermark: null },
      processed: 5,
      errors: 0,
      now: T0 + 102,
    });

    const after = await runs.require(run.runId);
    expect(after.progress.processed).toBe(105);
    expect(after.restarts).toBe(1);
    expect(after.resume.reason).toBe('resumed');
  });

  it('lets only one of two concurrent fences win', async () => {
    const run = await runningRunWithCheckpoint();
    const fence = () =>
      runs.fence({
        runId: run.runId,
        epoch: 1,
        resume: { reason: 'resumed', from: 'checkpoint', at: T0 },
        reset: false,
        countRestart: true,
        page: 2,
        now: T0 + 100,
      });

    const results = await Promise.allSettled([fence(), fence(), fence()]);

    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect((await runs.require(run.runId)).epoch).toBe(2);
  });
});

describe('the checkpoint is monotonic', () => {
  const writes: Record<string, (run: SyncRun) => Promise<unknown>> = {
    heartbeat: (run) => runs.heartbeat(run.runId, 1, T0 + 50),
    defer: (run) => runs.defer(run.runId, 1, 2, T0 + 10_000, T0 + 50),
    fence: (run) =>
      runs.fence({
        runId: run.runId,
        epoch: 1,
        resume: { reason: 'checkpoint_stale', from: 'scratch', at: T0 + 50 },
        reset: true,
        countRestart: true,
        page: 1,
        now: T0 + 50,
      }),
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
    const run = await runningRunWithCheckpoint();

    await writes[name]!(run);

    const after = await runs.require(run.runId);
    expect(after.checkpoint).toEqual(run.checkpoint);
  });

  it('a later page commit does move it', async () => {
    const run = await runningRunWithCheckpoint();

    await runs.commitPage({
      runId: run.runId,
      epoch: 1,
      page: 2,
      checkpoint: { cursor: 'cursor-3', watermark: '2024-02-01T00:00:00Z' },
      processed: 1,
      errors: 0,
      now: T0 + 60,
    });

    const after = await runs.require(run.runId);
    expect(after.checkpoint).not.toEqual(run.checkpoint);
    expect(after.checkpoint).toMatchObject({ cursor: 'cursor-3', page: 2 });
  });
});

describe('cancel', () => {
  it('makes the next heartbeat and commit fail as cancelled and releases the lock', async () => {
    const run = await runningRunWithCheckpoint();

    await lifecycle.cancel(run.runId, T0 + 10);

    await expect(runs.heartbeat(run.runId, 1, T0 + 11)).rejects.toBeInstanceOf(RunCancelledError);
    await expect(
      runs.commitPage({
        runId: run.runId,
        epoch: 1,
        page: 2,
        checkpoint: { cursor: null, watermark: null },
        processed: 1,
        errors: 0,
        now: T0 + 11,
      }),
    ).rejects.toBeInstanceOf(RunCancelledError);
    expect((await sources.require(run.sourceId)).activeRunId).toBeNull();
    expect((await runs.require(run.runId)).state).toBe('cancelled');
  });

  it('cannot be started or resumed once cancelled', async () => {
    const sourceId = await newSource();
    const run = await lifecycle.createHoldingLock({
      runId: ulid(),
      sourceId,
      mode: 'full',
      params: {},
      paramsHash: 'p',
      resume: { reason: 'fresh_start', from: 'scratch', at: T0 },
      now: T0,
    });
    await lifecycle.cancel(run.runId, T0 + 1);

    await expect(runs.start(run.runId, 1, T0 + 2)).rejects.toBeInstanceOf(RunCancelledError);
    await expect(
      runs.fence({
        runId: run.runId,
        epoch: 1,
        resume: { reason: 'resumed', from: 'checkpoint', at: T0 },
        reset: false,
        countRestart: true,
        page: 2,
        now: T0 + 2,
      }),
    ).rejects.toBeInstanceOf(RunCancelledError);
    expect((await runs.require(run.runId)).state).toBe('cancelled');
  });

  it('refuses to cancel a finished run', async () => {
    const run = await runningRunWithCheckpoint();
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
    const run = await runningRunWithCheckpoint();

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
    const run = await runningRunWithCheckpoint();

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
  it('finds active runs whose heartbeat is older than the threshold, not deferred ones', async () => {
    const silent = await runningRunWithCheckpoint();
    const deferred = await runningRunWithCheckpoint();
    await runs.defer(deferred.runId, 1, 2, T0 + 1_000_000, T0 + 3);

    const found = (await runs.listSilent(T0 + 100)).map((r) => r.runId);

    expect(found).toContain(silent.runId);
    expect(found).not.toContain(deferred.runId);
    expect(await runs.listSilent(T0)).not.toContainEqual(expect.objectContaining({ runId: silent.runId }));
  });
});
