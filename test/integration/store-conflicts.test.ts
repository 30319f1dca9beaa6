import { ulid } from 'ulid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { destroyAwsClients } from '../../lib/aws/clients.js';
import type { DynamoFaultPlan } from '../../lib/aws/dynamo-faults.js';
import type { SyncRun } from '../../lib/run/model.js';
import { ChainStore } from '../../lib/store/chains.js';
import { DeadLetterStore } from '../../lib/store/dead-letters.js';
import { RunFencedError, SourceBusyError } from '../../lib/store/errors.js';
import { RunLifecycle } from '../../lib/store/lifecycle.js';
import { SourceStore } from '../../lib/store/sources.js';
import { SyncRunStore } from '../../lib/store/sync-runs.js';
import { setUpTestAws, type TestAws } from '../support/aws.js';
import { type FaultyAws, withDynamoFaults } from '../support/dynamo-faults.js';
import { newRun } from '../support/runs.js';

/**
 * The store's writes as they meet DynamoDB's transaction conflicts, which no emulator raises:
 * every store here talks through the fault layer, armed after each test's setup so that exactly
 * the write under test collides on its first attempt.
 */
let aws: TestAws;
let faulty: FaultyAws;
let runs: SyncRunStore;
let chains: ChainStore;
let sources: SourceStore;
let lifecycle: RunLifecycle;
const T0 = 1_700_000_000_000;

beforeAll(async () => {
  aws = await setUpTestAws('conflicts');
  faulty = await withDynamoFaults(aws, { seed: 11 });
  runs = new SyncRunStore(faulty.clients.doc, aws.names.syncRunsTable);
  chains = new ChainStore(faulty.clients.doc, runs);
  sources = new SourceStore(faulty.clients.doc, aws.names.sourcesTable);
  lifecycle = new RunLifecycle(
    faulty.clients.doc,
    runs,
    sources,
    new DeadLetterStore(faulty.clients.doc, aws.names.deadLettersTable),
  );
});
afterAll(() => {
  destroyAwsClients(aws.clients);
  destroyAwsClients(faulty.clients);
  faulty.faults.destroy();
});

/** Arms the layer: the next `limit` draws of `plan`'s chances collide. */
function collide(plan: Omit<DynamoFaultPlan, 'seed'>): void {
  faulty.faults.set({ seed: 11, limit: 1, ...plan });
}
const calm = () => faulty.faults.set({ seed: 11 });

async function newSource(): Promise<string> {
  const sourceId = `src-${ulid().toLowerCase()}`;
  await sources.put(
    { sourceId, connector: 'rest-json', config: { baseUrl: 'http://x' }, schedules: [], configHash: 'h1' },
    T0,
  );
  return sourceId;
}

const start = (sourceId: string) =>
  lifecycle.createHoldingLock(newRun({ runId: ulid(), sourceId, mode: 'incremental', params: {}, now: T0 }));

/** A running run on a fresh source, page 1 claimed at epoch 1. */
async function runningRun(): Promise<SyncRun> {
  calm();
  const run = await start(await newSource());
  await runs.start(run.runId, 1, T0 + 1);
  await chains.claim({ runId: run.runId }, 1, 1, T0 + 2);
  return run;
}

describe('run start', () => {
  it('createHoldingLock that meets a conflict starts the run', async () => {
    calm();
    const sourceId = await newSource();
    collide({ transactionConflict: 1 });
    const before = faulty.faults.counts.transactionConflicts;
    const run = await start(sourceId);
    expect(faulty.faults.counts.transactionConflicts).toBe(before + 1);
    expect(run.state).toBe('queued');
    expect((await sources.require(sourceId)).activeRunId).toBe(run.runId);
  });

  it('createHoldingLock that meets a conflict on a busy source answers busy with the holder', async () => {
    calm();
    const sourceId = await newSource();
    const holder = await start(sourceId);
    collide({ transactionConflict: 1 });
    const before = faulty.faults.counts.transactionConflicts;
    const refusal = await start(sourceId).catch((e: unknown) => e);
    expect(faulty.faults.counts.transactionConflicts).toBe(before + 1);
    expect(refusal).toBeInstanceOf(SourceBusyError);
    expect((refusal as SourceBusyError).activeRunId).toBe(holder.runId);
  });
});

describe('reaper fence', () => {
  const fence = (run: SyncRun, epoch = 1) =>
    runs.fence({
      runId: run.runId,
      epoch,
      partitions: 0,
      resume: { reason: 'resumed', from: 'checkpoint', at: T0 + 100 },
      reset: false,
      rearm: [{ page: 1 }],
      countRestart: true,
      now: T0 + 100,
    });

  it('fence retries after a conflict and moves the run to the next epoch', async () => {
    const run = await runningRun();
    collide({ transactionConflict: 1 });
    const before = faulty.faults.counts.transactionConflicts;
    expect(await fence(run)).toBe(2);
    expect(faulty.faults.counts.transactionConflicts).toBe(before + 1);
    expect((await runs.require(run.runId)).epoch).toBe(2);
  });

  it('a fence that meets a conflict and then a newer epoch is told it was fenced', async () => {
    const run = await runningRun();
    await fence(run);
    collide({ transactionConflict: 1 });
    await expect(fence(run)).rejects.toBeInstanceOf(RunFencedError);
    expect((await runs.require(run.runId)).epoch).toBe(2);
  });
});

describe('single-item writes of a running run', () => {
  it.each([
    ['a heartbeat', (run: SyncRun) => chains.heartbeat({ runId: run.runId }, 1, T0 + 5)],
    [
      'a page commit',
      (run: SyncRun) =>
        chains.commit({
          ref: { runId: run.runId },
          epoch: 1,
          page: 1,
          checkpoint: { cursor: 'c2', watermark: null },
          processed: 3,
          errors: 0,
          now: T0 + 5,
        }),
    ],
    ['a claim', (run: SyncRun) => chains.claim({ runId: run.runId }, 1, 1, T0 + 5)],
  ])('%s that meets a conflict is written on the next attempt', async (_name, write) => {
    const run = await runningRun();
    collide({ writeConflict: 1 });
    const before = faulty.faults.counts.writeConflicts;
    await write(run);
    expect(faulty.faults.counts.writeConflicts).toBe(before + 1);
    const chain = await chains.get({ runId: run.runId });
    expect(chain?.heartbeatAt).toBe(T0 + 5);
  });

  it('a commit retried after a conflict still counts its page once', async () => {
    const run = await runningRun();
    collide({ writeConflict: 1 });
    const commit = () =>
      chains.commit({
        ref: { runId: run.runId },
        epoch: 1,
        page: 1,
        checkpoint: { cursor: 'c2', watermark: null },
        processed: 3,
        errors: 0,
        now: T0 + 5,
      });
    await commit();
    await expect(commit()).rejects.toThrow();
    expect((await runs.require(run.runId)).progress.processed).toBe(3);
  });
});
