import { describe, expect, it } from 'vitest';
import type { ChainEnding } from '../../lib/store/chain-commit.js';
import type { ChainRef } from '../../lib/store/chain-item.js';
import type { ChainStore } from '../../lib/store/chains.js';
import { StoreError } from '../../lib/store/errors.js';
import type { SyncRunStore } from '../../lib/store/sync-runs.js';
import { type ChainFixture, T0, useChainFixture, WINDOWS } from '../support/chain-fixture.js';

/**
 * How chains end, tested on the store directly: a chain that ended takes no page, the open window
 * goes idle only while another partition is open, the last open partition ends only as the last,
 * and a run is planned once.
 */

let fx: ChainFixture;
let runs: SyncRunStore;
let chains: ChainStore;

useChainFixture('endings', (f) => {
  fx = f;
  ({ runs, chains } = f);
});

const runningRun = () => fx.runningRun();
const plannedRun = () => fx.plannedRun();
const commit = (ref: ChainRef, page: number, ending?: ChainEnding) => fx.commit(ref, page, ending);

const openPartitions = async (runId: string) => (await runs.require(runId)).openPartitions;

describe('a chain that ended', () => {
  it("takes no further page: the run's own chain", async () => {
    const run = await runningRun();
    const ref = { runId: run.runId };
    await commit(ref, 1, 'done');

    await expect(commit(ref, 2)).rejects.toBeInstanceOf(StoreError);
    expect((await runs.require(run.runId)).progress).toMatchObject({ processed: 10, pages: 1 });
  });

  it("takes no further page: a partition's chain, done or idle", async () => {
    const run = await plannedRun();
    const done = { runId: run.runId, partition: 0 };
    const idle = { runId: run.runId, partition: 1 };
    await commit(idle, 1, 'idle');
    await commit(done, 1, 'done');

    await expect(commit(done, 2)).rejects.toBeInstanceOf(StoreError);
    await expect(commit(idle, 2)).rejects.toBeInstanceOf(StoreError);
    // Each partition's first page, counted once: the refused pages added nothing.
    expect((await runs.require(run.runId)).progress).toMatchObject({ processed: 20, pages: 2 });
  });
});

describe('the open window', () => {
  it('goes idle while another partition is open, and the idle one still counts as open', async () => {
    const run = await plannedRun();

    await commit({ runId: run.runId, partition: 1 }, 1, 'idle');

    expect(await openPartitions(run.runId)).toBe(2);
    expect((await chains.get({ runId: run.runId, partition: 1 }))?.state).toBe('idle');
  });

  it('may not go idle once it is the only open partition: its tail pass would never be armed', async () => {
    const run = await plannedRun();
    const open = { runId: run.runId, partition: 1 };
    await commit({ runId: run.runId, partition: 0 }, 1, 'done');
    expect(await openPartitions(run.runId)).toBe(1);

    await expect(commit(open, 1, 'idle')).rejects.toBeInstanceOf(StoreError);
    expect((await chains.get(open))?.state).toBe('running');
  });
});

describe('the last open partition', () => {
  it('ends as the last one when no other is open, and closes the count', async () => {
    const run = await plannedRun();
    await commit({ runId: run.runId, partition: 0 }, 1, 'done');

    await commit({ runId: run.runId, partition: 1 }, 1, 'last_open');

    expect(await openPartitions(run.runId)).toBe(0);
    expect((await runs.require(run.runId)).progress).toMatchObject({ processed: 20 });
  });

  it('may not end as the last one while another partition is open', async () => {
    const run = await plannedRun();

    await expect(commit({ runId: run.runId, partition: 1 }, 1, 'last_open')).rejects.toBeInstanceOf(
      StoreError,
    );
    expect(await openPartitions(run.runId)).toBe(2);
    expect((await chains.get({ runId: run.runId, partition: 1 }))?.state).toBe('running');
  });
});

const forceChain = (ref: ChainRef, fields: Record<string, unknown>) => fx.forceChain(ref, fields);

const plan = (runId: string) => chains.plan({ runId, epoch: 1, windows: WINDOWS, total: 5, now: T0 + 3 });

describe('planning', () => {
  it('writes one plan: a second, from another delivery of the planning message, is refused', async () => {
    const run = await plannedRun();

    await expect(
      chains.plan({ runId: run.runId, epoch: 1, windows: [...WINDOWS, WINDOWS[1]!], total: 5, now: T0 + 3 }),
    ).rejects.toBeInstanceOf(StoreError);
    const after = await runs.require(run.runId);
    expect(after.openPartitions).toBe(2);
    expect(after.progress.total).toBe(100);
  });

  it("is refused once the run's own chain went past page 1 unplanned (a late planning message)", async () => {
    const run = await runningRun();
    await commit({ runId: run.runId }, 1);

    await expect(plan(run.runId)).rejects.toBeInstanceOf(StoreError);
    expect((await runs.require(run.runId)).partitions).toBeUndefined();
  });

  it("is refused when the run's own chain is not running, even at page 1", async () => {
    const run = await runningRun();
    await forceChain({ runId: run.runId }, { chainState: 'done' });

    await expect(plan(run.runId)).rejects.toBeInstanceOf(StoreError);
    expect((await runs.require(run.runId)).openPartitions).toBeUndefined();
  });

  it('is refused by a run item that has a plan, whatever its own chain says', async () => {
    const run = await plannedRun();
    await forceChain({ runId: run.runId }, { chainState: 'running', nextPage: 1 });

    await expect(plan(run.runId)).rejects.toBeInstanceOf(StoreError);
    expect((await runs.require(run.runId)).progress.total).toBe(100);
  });
});
