import { describe, expect, it } from 'vitest';
import type { SyncRun } from '../../lib/run/model.js';
import {
  RunCancelledError,
  RunFencedError,
  RunFinishedError,
  RunStateError,
} from '../../lib/store/errors.js';
import type { RunEnding, RunLifecycle } from '../../lib/store/lifecycle.js';
import type { SyncRunStore } from '../../lib/store/sync-runs.js';
import { type ChainFixture, T0, useChainFixture } from '../support/chain-fixture.js';

/**
 * The run item's own transitions, on the store directly: a start, the end of a run arriving
 * twice or after another ending, and the outbox cleared late. Each test is the scenario one
 * condition of the run store defends (see docs/testing.md, "Condition mutants").
 */

let fx: ChainFixture;
let runs: SyncRunStore;
let lifecycle: RunLifecycle;

useChainFixture('runtrans', (f) => {
  fx = f;
  ({ runs, lifecycle } = f);
});

/** The end of `run`: by its worker at epoch 1 by default, or by a decision not fenced by epoch (`epoch: null`). */
function finish(run: SyncRun, ending: Partial<RunEnding> & Pick<RunEnding, 'state' | 'now'>): Promise<void> {
  return lifecycle.finish({
    runId: run.runId,
    sourceId: run.sourceId,
    epoch: 1,
    ...(ending.state === 'failed' ? { failure: { reason: 'page_failed', message: 'boom' } } : {}),
    ...ending,
  });
}

describe('start', () => {
  it('is refused at an epoch the run is not at, and leaves the run queued', async () => {
    const run = await fx.queuedRun();

    await expect(runs.start(run.runId, 2, T0 + 1)).rejects.toBeInstanceOf(RunFencedError);
    expect(await runs.require(run.runId)).toMatchObject({ state: 'queued', epoch: 1, startedAt: null });
  });
});

describe('the end of a run that never started', () => {
  it('is refused as a success: only the running worker reads the whole stream', async () => {
    const run = await fx.queuedRun();

    await expect(finish(run, { state: 'succeeded', now: T0 + 5 })).rejects.toBeInstanceOf(RunStateError);
    expect((await runs.require(run.runId)).state).toBe('queued');
  });

  it('is taken as a failure: a crash loop on page 1 ends the run', async () => {
    const run = await fx.queuedRun();

    await finish(run, { state: 'failed', now: T0 + 5 });

    expect(await runs.require(run.runId)).toMatchObject({ state: 'failed', outboxAt: T0 + 5 });
  });
});

/** A running run of each kind: one read as a single stream, one planned into two windows. */
const KINDS = [
  { kind: 'a run read as one stream', running: () => fx.runningRun() },
  { kind: 'a planned run', running: () => fx.plannedRun() },
] as const;

describe.each(KINDS)('the end of $kind', ({ running }) => {
  it('is refused when a finish is retried after the outcome went out: the outbox is not put back', async () => {
    const run = await running();
    await finish(run, { state: 'succeeded', now: T0 + 20 });
    await runs.clearOutbox(run.runId);

    await expect(finish(run, { state: 'succeeded', now: T0 + 30 })).rejects.toBeInstanceOf(RunFinishedError);
    expect(await runs.require(run.runId)).toMatchObject({
      state: 'succeeded',
      finishedAt: T0 + 20,
      outboxAt: null,
    });
  });

  it('a failure decided after the run succeeded is refused, and the run stays succeeded', async () => {
    const run = await running();
    await finish(run, { state: 'succeeded', now: T0 + 20 });

    // The reaper's verdict, not fenced by epoch, read before the worker's success landed.
    await expect(finish(run, { state: 'failed', epoch: null, now: T0 + 30 })).rejects.toBeInstanceOf(
      RunFinishedError,
    );
    expect(await runs.require(run.runId)).toMatchObject({ state: 'succeeded', failure: null });
  });

  it('a failure decided after the run was cancelled is refused as cancelled', async () => {
    const run = await running();
    await lifecycle.cancel(run.runId, T0 + 20);

    await expect(finish(run, { state: 'failed', epoch: null, now: T0 + 30 })).rejects.toBeInstanceOf(
      RunCancelledError,
    );
    await expect(finish(run, { state: 'succeeded', now: T0 + 30 })).rejects.toBeInstanceOf(RunCancelledError);
    expect(await runs.require(run.runId)).toMatchObject({ state: 'cancelled', outboxAt: null });
  });

  it('a failure of the running run ends it and puts its outcome in the outbox', async () => {
    const run = await running();

    await finish(run, { state: 'failed', now: T0 + 20 });

    expect(await runs.require(run.runId)).toMatchObject({ state: 'failed', outboxAt: T0 + 20 });
  });
});

describe('clearOutbox', () => {
  it('takes an ended run out of the outbox and the active index; a second clear changes nothing', async () => {
    const run = await fx.runningRun();
    await finish(run, { state: 'succeeded', now: T0 + 20 });
    const inIndex = async () =>
      (await runs.listSilent(Number.MAX_SAFE_INTEGER)).some((r) => r.runId === run.runId);
    expect(await inIndex()).toBe(true);

    await runs.clearOutbox(run.runId);
    await runs.clearOutbox(run.runId);

    expect((await runs.require(run.runId)).outboxAt).toBeNull();
    expect(await inIndex()).toBe(false);
  });

  it('does not bring back a run deleted before its outcome was confirmed published', async () => {
    const run = await fx.runningRun();
    await finish(run, { state: 'succeeded', now: T0 + 20 });
    // The source is deleted (its lock is free once the run ended) before the worker clears the outbox.
    await runs.deleteAllOf(run.sourceId);

    await runs.clearOutbox(run.runId);

    expect(await runs.get(run.runId)).toBeUndefined();
  });
});
