import { type DynamoDBDocumentClient, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { DeadLetterStore } from '../../lib/store/dead-letters.js';
import { RunLifecycle } from '../../lib/store/lifecycle.js';
import { type ChainFixture, T0, useChainFixture } from '../support/chain-fixture.js';

/**
 * The write that ends a run fixes its outcome, on the store directly: the counts of every chain
 * (open ones included), the dead letters whose last failure is the run, the total the source
 * stated; and a page committed between the read and the end is not left out of it.
 */

let fx: ChainFixture;
let deadLetters: DeadLetterStore;

useChainFixture('outcome', (f) => {
  fx = f;
  deadLetters = new DeadLetterStore(f.aws.clients.doc, f.aws.names.deadLettersTable);
});

const page = (runId: string, n: number, fields: { last?: boolean; total?: number; stated?: number } = {}) =>
  fx.chains.commit({
    ref: { runId },
    epoch: 1,
    page: n,
    checkpoint: { cursor: fields.last ? null : `c-${n + 1}`, watermark: null },
    processed: 10,
    errors: 1,
    ...(fields.total !== undefined ? { total: fields.total } : {}),
    ...(fields.stated !== undefined ? { statedTotal: fields.stated } : {}),
    now: T0 + 10 + n,
  });

const file = (sourceId: string, runId: string, ref: string) =>
  deadLetters.record({
    sourceId,
    kind: 'item',
    ref,
    errorClass: 'permanent',
    reason: 'invalid record',
    attempts: 1,
    runId,
    page: 1,
    now: T0 + 5,
  });

describe('the end of a run', () => {
  it("fixes a failed run's counts, open chain included, and the dead letters whose last failure it is", async () => {
    const run = await fx.runningRun();
    await page(run.runId, 1, { total: 40, stated: 40 });
    await file(run.sourceId, run.runId, 'e-1');
    await file(run.sourceId, run.runId, 'e-2');
    // Another run's entry of the same source is not this run's.
    await file(run.sourceId, '01J9ZQ4T7J8Y2K3M4N5P6Q7R8S', 'e-3');

    await fx.lifecycle.finish({
      runId: run.runId,
      sourceId: run.sourceId,
      epoch: 1,
      state: 'failed',
      now: T0 + 50,
    });

    const ended = await fx.runs.require(run.runId);
    expect(ended.outcome).toEqual({ processed: 10, failed: 1, deadLetters: 2, total: 40 });
  });

  it('keeps the total the source stated on success, and gives an estimate way to the count', async () => {
    const stated = await fx.runningRun();
    await page(stated.runId, 1, { last: true, total: 12, stated: 12 });
    const estimated = await fx.runningRun();
    await page(estimated.runId, 1, { last: true, total: 12 });

    for (const run of [stated, estimated])
      await fx.lifecycle.finish({
        runId: run.runId,
        sourceId: run.sourceId,
        epoch: 1,
        state: 'succeeded',
        now: T0 + 50,
      });

    const [a, b] = [await fx.runs.require(stated.runId), await fx.runs.require(estimated.runId)];
    expect(a.progress.total).toBe(12);
    expect(a.outcome).toEqual({ processed: 10, failed: 1, deadLetters: 0, total: 12 });
    expect(b.progress.total).toBe(10);
    expect(b.outcome?.total).toBeNull();
  });

  it('reads again when a page was committed after its read, so the outcome holds that page', async () => {
    const run = await fx.runningRun();
    await page(run.runId, 1);
    const real = fx.aws.clients.doc;
    let interleaved = false;
    // The first attempt of the end's transaction is preceded by another page's commit.
    const racing = {
      send: async (command: unknown) => {
        if (command instanceof TransactWriteCommand && !interleaved) {
          interleaved = true;
          await page(run.runId, 2);
        }
        return real.send(command as never);
      },
    } as unknown as DynamoDBDocumentClient;
    const lifecycle = new RunLifecycle(racing, fx.runs, fx.lifecycle.sources, deadLetters);

    await lifecycle.finish({
      runId: run.runId,
      sourceId: run.sourceId,
      epoch: 1,
      state: 'failed',
      now: T0 + 50,
    });

    expect(interleaved).toBe(true);
    const ended = await fx.runs.require(run.runId);
    expect(ended.progress.processed).toBe(20);
    expect(ended.outcome).toMatchObject({ processed: 20, failed: 2 });
  });
});
