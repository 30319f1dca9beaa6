import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, describe, expect, it } from 'vitest';
import { RELIABILITY } from '../../lib/config/constants.js';
import { drainDeadMessage, startRun } from '../../lib/engine/index.js';
import { chainKey } from '../../lib/store/chain-item.js';
import { CrashHooks, movableClock } from '../support/crash.js';
import { fakeRestConfig, putSource, useEngineWithFakes, waitForRun } from '../support/harness.js';

/*
 * A page that can never be delivered (a message the worker cannot read, a message the queue
 * would refuse) ends its run failed with a verdict that says why, at once: never the redrive, a
 * re-send every 15 minutes and a restart from scratch every 6 hours.
 */

const clock = movableClock();
const hooks = new CrashHooks();
const { engine, startFake, runtime } = useEngineWithFakes('undeliverable', { clock, hooks });
let counter = 0;
afterEach(() => hooks.disarm());

/** A run whose page 1 was committed and whose worker died before sending page 2 (nobody sends it). */
async function runStoppedAfterPage1() {
  const fake = await startFake({ entities: 300, seed: 40 + counter, latencyMs: 0 });
  const sourceId = `undeliverable-${++counter}`;
  await putSource(engine.deps, sourceId, 'rest-json', fakeRestConfig(fake.url));
  hooks.arm({ point: 'afterCommit', page: 1 });
  const crashed = hooks.nextCrash();
  const started = await startRun(engine.deps, { sourceId, mode: 'full' });
  await crashed;
  return { sourceId, run: await engine.deps.runs.require(started.runId) };
}

/** A page message as an older Harvester could send it: a keyset cursor longer than a message may carry. */
function oversized(run: { runId: string; sourceId: string; epoch: number }, page: number): string {
  return JSON.stringify({
    v: 1,
    runId: run.runId,
    sourceId: run.sourceId,
    epoch: run.epoch,
    page,
    cursor: `ks1.${'x'.repeat(8_700)}`,
  });
}

describe('a page message nobody can read', () => {
  it('ends its run failed with page_undeliverable at its first delivery, the message filed', async () => {
    const { sourceId, run } = await runStoppedAfterPage1();

    await engine.aws.clients.sqs.send(
      new SendMessageCommand({ QueueUrl: engine.aws.resources.pageQueueUrl, MessageBody: oversized(run, 2) }),
    );
    const ended = await waitForRun(engine.deps, run.runId, undefined, 20_000);

    expect(ended.state).toBe('failed');
    expect(ended.failure?.reason).toBe('page_undeliverable');
    expect(ended.failure?.message).toMatch(/page 2 cannot be delivered: .*cursor/);
    expect(ended.checkpoint).toEqual(run.checkpoint);
    const entries = await engine.deps.deadLetters.list(sourceId, { runId: run.runId });
    expect(entries.items).toContainEqual(expect.objectContaining({ kind: 'page', errorClass: 'permanent' }));
    expect((await engine.deps.sources.require(sourceId)).activeRunId).toBeNull();
  });

  it('drained: ends the run when it is the page the run waits for, and leaves the run alone when it is not', async () => {
    const { run } = await runStoppedAfterPage1();

    const stale = await drainDeadMessage(engine.deps, oversized(run, 1), RELIABILITY.maxReceiveCount);
    expect(stale.outcome).toBe('malformed');
    expect((await engine.deps.runs.require(run.runId)).state).toBe('running');

    const expected = await drainDeadMessage(engine.deps, oversized(run, 2), RELIABILITY.maxReceiveCount);
    const ended = await engine.deps.runs.require(run.runId);

    expect(expected.outcome).toBe('failed_run');
    expect(ended.state).toBe('failed');
    expect(ended.failure?.reason).toBe('page_undeliverable');
  });
});

describe('a page the queue would refuse', () => {
  it('ends the run failed in the reaper pass that would have sent it again', async () => {
    const { run } = await runStoppedAfterPage1();
    // A checkpoint written before positions were bounded: its cursor no longer fits a message.
    await engine.aws.clients.doc.send(
      new UpdateCommand({
        TableName: engine.aws.names.syncRunsTable,
        // The run's own chain holds its checkpoint.
        Key: chainKey({ runId: run.runId }),
        UpdateExpression: 'SET checkpoint.#cursor = :cursor',
        ExpressionAttributeNames: { '#cursor': 'cursor' },
        ExpressionAttributeValues: { ':cursor': `ks1.${'x'.repeat(8_700)}` },
      }),
    );

    clock.advance(RELIABILITY.silenceThresholdMs + 1_000);
    const report = await runtime.reapNow();
    const ended = await engine.deps.runs.require(run.runId);

    expect(report.actions).toContainEqual({
      runId: run.runId,
      verdict: 'page_undeliverable',
      action: 'fail',
    });
    expect(ended.state).toBe('failed');
    expect(ended.failure?.reason).toBe('page_undeliverable');
    expect(ended.failure?.message).toMatch(/page 2 cannot be delivered: .*cursor/);
  });
});
