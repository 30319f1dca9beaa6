import { PurgeQueueCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { beforeEach, describe, expect, it } from 'vitest';
import { RELIABILITY } from '../../lib/config/constants.js';
import { reap } from '../../lib/engine/index.js';
import { movableClock } from '../support/crash.js';
import { createQueuedRun, fakeRestConfig, putSource, useEngineWithFakes } from '../support/harness.js';
import { newRun } from '../support/runs.js';

const clock = movableClock();
const { engine } = useEngineWithFakes('reaper', { workers: 0, clock });

beforeEach(async () => {
  await engine.aws.clients.sqs.send(new PurgeQueueCommand({ QueueUrl: engine.aws.resources.pageQueueUrl }));
});

/** A queued run whose first page message was lost (never sent). */
async function queuedRunWithoutMessage(sourceId: string): Promise<string> {
  await putSource(engine.deps, sourceId, 'rest-json', fakeRestConfig('http://127.0.0.1:9'));
  return createQueuedRun(engine.deps, sourceId);
}

/** Page messages for `runId` now in the queue (earlier tests' runs are reaped again as time moves on). */
async function queued(runId: string): Promise<number> {
  const bodies: string[] = [];
  for (;;) {
    const { Messages = [] } = await engine.aws.clients.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: engine.aws.resources.pageQueueUrl,
        MaxNumberOfMessages: 10,
        VisibilityTimeout: 30,
      }),
    );
    if (Messages.length === 0) break;
    bodies.push(...Messages.map((m) => m.Body!));
  }
  return bodies.filter((body) => (JSON.parse(body) as { runId: string }).runId === runId).length;
}

describe('the reaper', () => {
  it('leaves a run alone while its heartbeat is within the silence threshold', async () => {
    const runId = await queuedRunWithoutMessage('quiet');
    clock.advance(RELIABILITY.silenceThresholdMs - 5_000);

    const report = await reap(engine.deps);

    expect(report.actions.map((a) => a.runId)).not.toContain(runId);
    expect(await queued(runId)).toBe(0);
  });

  it('sends page 1 again, at the same epoch and without a restart, when the first message was lost', async () => {
    const runId = await queuedRunWithoutMessage('lost-first');
    clock.advance(RELIABILITY.silenceThresholdMs + 1_000);

    const report = await reap(engine.deps);

    expect(report.actions).toContainEqual({ runId, verdict: 'send_unconfirmed', action: 'resend' });
    const run = await engine.deps.runs.require(runId);
    expect(run).toMatchObject({ state: 'queued', epoch: 1, nextPage: 1, restarts: 0 });
    expect(run.handoff).toMatchObject({ page: 1, sentAt: expect.any(Number) });
    expect(await queued(runId)).toBe(1);
  });

  it('counts a run whose re-send SQS refused as waiting in the queue, and sends the page on the next pass', async () => {
    const runId = await queuedRunWithoutMessage('resend-refused');
    const since = (await engine.deps.runs.require(runId)).createdAt;
    clock.advance(RELIABILITY.silenceThresholdMs + 1_000);
    let refuse = true;
    engine.aws.clients.sqs.middlewareStack.add(
      (next, context) => async (args) => {
        if (refuse && context.commandName === 'SendMessageCommand') {
          throw Object.assign(new Error('refused by the test'), { name: 'ServiceUnavailable' });
        }
        return next(args);
      },
      { step: 'initialize', name: 'refuseResend' },
    );
    let refused: Awaited<ReturnType<typeof reap>>;
    try {
      refused = await reap(engine.deps);
    } finally {
      refuse = false;
      engine.aws.clients.sqs.middlewareStack.remove('refuseResend');
    }

    // Not lost and not acted on: the backlog signal counts it, since its first page was handed over.
    expect(refused.actions.map((a) => a.runId)).not.toContain(runId);
    expect(refused.waiting).toContainEqual({ runId, since });
    expect(await queued(runId)).toBe(0);
    // The refused attempt renewed the handoff: the copy goes out once the chain is silent again.
    clock.advance(RELIABILITY.silenceThresholdMs + 1_000);
    const next = await reap(engine.deps);
    expect(next.actions).toContainEqual({ runId, verdict: 'send_unconfirmed', action: 'resend' });
    expect(await queued(runId)).toBe(1);
  });

  it('enqueues once when two reapers act on the same silent run at once', async () => {
    const runId = await queuedRunWithoutMessage('two-reapers');
    clock.advance(RELIABILITY.silenceThresholdMs + 1_000);

    const reports = await Promise.all([reap(engine.deps), reap(engine.deps), reap(engine.deps)]);

    const actions = reports.flatMap((r) => r.actions).filter((a) => a.runId === runId);
    expect(actions).toHaveLength(1);
    expect((await engine.deps.runs.require(runId)).epoch).toBe(1);
    expect(await queued(runId)).toBe(1);
  });

  it('leaves a deferred run alone until its pause is over, then treats silence as usual', async () => {
    const runId = await queuedRunWithoutMessage('paused');
    await engine.deps.runs.start(runId, 1, clock.now());
    await engine.deps.chains.defer({ runId }, 1, 1, clock.now() + 600_000, clock.now());

    clock.advance(300_000);
    expect((await reap(engine.deps)).actions.map((a) => a.runId)).not.toContain(runId);
    clock.advance(300_000 + RELIABILITY.silenceThresholdMs + 1_000);
    expect((await reap(engine.deps)).actions.map((a) => a.runId)).toContain(runId);
  });

  it('ends a crash-looping retry-failed run without filing its dead-letter listing cursor as a source page', async () => {
    await putSource(engine.deps, 'retry-loop', 'rest-json', fakeRestConfig('http://127.0.0.1:9'));
    const now = clock.now();
    const { runId } = await engine.deps.lifecycle.createHoldingLock(
      newRun({
        sourceId: 'retry-loop',
        mode: 'dlq_retry',
        params: { since: null, scope: null, configHash: 'x', deadLettersBefore: now },
        now,
      }),
    );
    await engine.deps.runs.start(runId, 1, now);
    // Three crashes: each time the reaper fenced it, a worker took page 1 and died.
    for (let epoch = 1; epoch <= RELIABILITY.maxRestartsPerRun; epoch++) {
      const at = clock.now();
      await engine.deps.runs.fence({
        runId,
        epoch,
        partitions: 0,
        resume: { reason: 'no_checkpoint', from: 'scratch', at },
        reset: true,
        rearm: [{ page: 1 }],
        countRestart: true,
        now: at,
      });
      await engine.deps.chains.claim({ runId }, epoch + 1, 1, at);
    }
    clock.advance(RELIABILITY.silenceThresholdMs + 1_000);

    const report = await reap(engine.deps);

    expect(report.actions).toContainEqual({ runId, verdict: 'restart_limit', action: 'fail' });
    expect((await engine.deps.runs.require(runId)).failure?.reason).toBe('restart_limit');
    expect(await engine.deps.deadLetters.listAll('retry-loop')).toEqual([]);
  });
});
