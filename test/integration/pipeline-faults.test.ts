import { PutRuleCommand, PutTargetsCommand } from '@aws-sdk/client-eventbridge';
import { GetScheduleCommand, ListSchedulesCommand } from '@aws-sdk/client-scheduler';
import {
  CreateQueueCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
} from '@aws-sdk/client-sqs';
import { beforeAll, describe, expect, it } from 'vitest';
import { processPage, RUN_EVENT_TYPES, startRun, UNKNOWN_SOURCE } from '../../lib/engine/index.js';
import { ScheduleFirer } from '../../lib/local/schedule-firer.js';
import { type PageMessage, parsePageMessage } from '../../lib/queue/page-message.js';
import { deferralSchedulePrefix } from '../../lib/queue/page-queue.js';
import type { FakeSource } from '../../tools/fake-source/index.js';
import { createQueuedRun, putSource, useEngineWithFakes, waitForRun } from '../support/harness.js';
import { sourceOfShape } from '../support/shapes.js';

// The cases share one fake source, i.e. one credential: with rate budgets on, a case's
// `Retry-After` (up to an hour here) would rightly pause the next case's runs too. The budget
// itself is exercised by rate-budget.test.ts. Most cases deliver page messages by hand; the one
// that needs workers starts its own runtime.
const { engine, startFake } = useEngineWithFakes('faults', { rateBudgets: false, workers: 0 });
let source: FakeSource;

beforeAll(async () => {
  source = await startFake({ entities: 300, seed: 7 });
});

/** Registers `sourceId` over the fake's rest-json listing, `pageSize` entities a page. */
async function putRestSource(sourceId: string, pageSize = 100): Promise<void> {
  const { connector, config } = sourceOfShape(source, 'rest-cursor', { pageSize });
  await putSource(engine.deps, sourceId, connector, config);
}

/** A running run with no message in the queue, and the message for its first page. */
async function runningRun(sourceId: string): Promise<PageMessage> {
  await putRestSource(sourceId);
  const runId = await createQueuedRun(engine.deps, sourceId);
  return { v: 1, runId, sourceId, epoch: 1, page: 1, cursor: null };
}

async function queueDepth(): Promise<{ visible: number; delayed: number }> {
  const { Attributes = {} } = await engine.aws.clients.sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: engine.aws.resources.pageQueueUrl,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesDelayed'],
    }),
  );
  return {
    visible: Number(Attributes.ApproximateNumberOfMessages),
    delayed: Number(Attributes.ApproximateNumberOfMessagesDelayed),
  };
}

/** Receives and deletes every visible page message. */
async function takeAll(): Promise<PageMessage[]> {
  const { Messages = [] } = await engine.aws.clients.sqs.send(
    new ReceiveMessageCommand({ QueueUrl: engine.aws.resources.pageQueueUrl, MaxNumberOfMessages: 10 }),
  );
  for (const m of Messages) {
    await engine.aws.clients.sqs.send(
      new DeleteMessageCommand({
        QueueUrl: engine.aws.resources.pageQueueUrl,
        ReceiptHandle: m.ReceiptHandle,
      }),
    );
  }
  return Messages.map((m) => parsePageMessage(m.Body!));
}

describe('duplicate delivery', () => {
  it('commits a page delivered three times, twice concurrently, exactly once', async () => {
    const message = await runningRun('dup');
    await takeAll();

    const results = await Promise.all([processPage(engine.deps, message), processPage(engine.deps, message)]);
    const late = await processPage(engine.deps, message);

    expect(results.map((r) => r.outcome).sort()).toEqual(['committed', 'dropped']);
    expect(late).toEqual({ outcome: 'dropped', reason: 'duplicate_page' });
    const run = await engine.deps.runs.require(message.runId);
    expect(run.progress.processed).toBe(100);
    expect(run.progress.pages).toBe(1);
    expect(run.nextPage).toBe(2);
    const successors = await takeAll();
    expect(successors).toHaveLength(1);
    expect(successors[0]).toMatchObject({ runId: message.runId, page: 2, epoch: 1 });
    const items = await engine.deps.items.listAll('dup');
    expect(items).toHaveLength(100);
  });
});

describe('a source reconfigured while its run is alive', () => {
  it('does not change the running stream: the run keeps the config it started with', async () => {
    await putRestSource('reconfigured');
    const started = await startRun(engine.deps, { sourceId: 'reconfigured', mode: 'full' });
    const [first] = await takeAll();
    await processPage(engine.deps, first!);

    await putRestSource('reconfigured', 50);
    const [second] = await takeAll();
    const result = await processPage(engine.deps, second!);

    expect(result).toEqual({ outcome: 'committed', next: 'enqueued' });
    const run = await engine.deps.runs.require(started.runId);
    expect(run.progress).toMatchObject({ processed: 200, pages: 2 });
    expect(run.params).toMatchObject({
      connector: 'rest-json',
      config: expect.objectContaining({ pageSize: 100 }),
    });
    await engine.deps.lifecycle.cancel(started.runId, Date.now());
    await takeAll();
  });
});

/** Processes queued page messages one by one until the run ends. */
async function drive(runId: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const run = await engine.deps.runs.require(runId);
    if (run.state !== 'queued' && run.state !== 'running') return;
    for (const message of await takeAll()) await processPage(engine.deps, message);
  }
  throw new Error(`run ${runId} did not end`);
}

describe('a retry-failed page delivered twice, the copies interleaved', () => {
  it('counts every recovered entry exactly once', async () => {
    source.control.setProfile({ invalidRecords: 60 });
    await putRestSource('retry-dup');
    const full = await startRun(engine.deps, { sourceId: 'retry-dup', mode: 'full' });
    await drive(full.runId);
    expect((await engine.deps.runs.require(full.runId)).errorCount).toBe(60);
    source.control.fix();

    const retry = await startRun(engine.deps, { sourceId: 'retry-dup', mode: 'dlq_retry' });
    const [first] = await takeAll();
    // Copy A pauses after loading its slice and before committing; copy B of the same message
    // runs to its commit meanwhile; then A resumes and loses the commit.
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let paused!: () => void;
    const atPause = new Promise<void>((resolve) => {
      paused = resolve;
    });
    const slow = {
      ...engine.deps,
      hooks: {
        async at(point: string) {
          if (point !== 'afterLoad') return;
          paused();
          await gate;
        },
      },
    };
    const copyA = processPage(slow, first!);
    await atPause;
    const copyB = await processPage(engine.deps, first!);
    release();
    const results = [await copyA, copyB];
    await drive(retry.runId);

    expect(results.map((r) => r.outcome).sort()).toEqual(['committed', 'dropped']);
    const run = await engine.deps.runs.require(retry.runId);
    expect(run).toMatchObject({ state: 'succeeded', errorCount: 0 });
    expect(run.progress.processed).toBe(60);
    expect(await engine.deps.deadLetters.listAll('retry-dup')).toEqual([]);
    source.control.setProfile('none');
  });
});

describe('deferral', () => {
  it('re-enqueues a page with an SQS delay for Retry-After: 300, without sleeping', async () => {
    source.control.setProfile({
      perPathOverrides: { '/records': { rate429: 1, retryAfterSeconds: 300, maxConsecutiveFailures: 100 } },
    });
    const message = await runningRun('defer-short');
    await takeAll();
    const before = Date.now();

    const result = await processPage(engine.deps, message);

    expect(Date.now() - before).toBeLessThan(10_000);
    expect(result.outcome).toBe('deferred');
    const run = await engine.deps.runs.require(message.runId);
    expect(run.deferredUntil).toBeGreaterThanOrEqual(before + 299_000);
    expect(run.progress.processed).toBe(0);
    const depth = await queueDepth();
    expect(depth.delayed).toBe(1);
    expect(depth.visible).toBe(0);
  });

  it('creates a one-time schedule for Retry-After: 3600, and firing it continues the run', async () => {
    source.control.setProfile({
      perPathOverrides: { '/records': { rate429: 1, retryAfterSeconds: 3600, maxConsecutiveFailures: 100 } },
    });
    const message = await runningRun('defer-long');
    await takeAll();

    const result = await processPage(engine.deps, message);

    expect(result.outcome).toBe('deferred');
    const run = await engine.deps.runs.require(message.runId);
    expect(run.deferredUntil).toBeGreaterThan(Date.now() + 3_500_000);
    const { Schedules = [] } = await engine.aws.clients.scheduler.send(
      new ListSchedulesCommand({
        GroupName: engine.aws.names.scheduleGroup,
        NamePrefix: deferralSchedulePrefix(message),
      }),
    );
    expect(Schedules).toHaveLength(1);
    const name = Schedules[0]!.Name!;
    const schedule = await engine.aws.clients.scheduler.send(
      new GetScheduleCommand({ Name: name, GroupName: engine.aws.names.scheduleGroup }),
    );
    expect(schedule.ScheduleExpression).toMatch(/^at\(/);
    expect(schedule.Target?.Arn).toBe(engine.aws.resources.pageQueueArn);
    expect(JSON.parse(schedule.Target!.Input!)).toMatchObject({
      runId: message.runId,
      page: 1,
      epoch: 1,
      deferred: true,
    });

    source.control.setProfile('none');
    const firer = new ScheduleFirer(
      engine.aws.clients.scheduler,
      engine.aws.names.scheduleGroup,
      new Map([
        [engine.aws.resources.pageQueueArn, async (input) => engine.deps.queue.send(JSON.parse(input))],
      ]),
      engine.deps.logger,
      () => Date.now() + 3_601_000,
    );
    const fired = await firer.tick();
    expect(fired).toContain(name);
    const [woken] = await takeAll();
    const continued = await processPage(engine.deps, woken!);

    expect(continued).toEqual({ outcome: 'committed', next: 'enqueued' });
    const after = await engine.deps.runs.require(message.runId);
    expect(after.progress.processed).toBe(100);
    expect(after.deferredUntil).toBeNull();
    await takeAll();
  });
});

describe('a permanent failure on page 1', () => {
  it('ends the run failed with a readable reason and raises the failure event', async () => {
    const observer = await engine.aws.clients.sqs.send(
      new CreateQueueCommand({ QueueName: `${engine.aws.prefix}-observer` }),
    );
    const { Attributes } = await engine.aws.clients.sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: observer.QueueUrl, AttributeNames: ['QueueArn'] }),
    );
    await engine.aws.clients.events.send(
      new PutRuleCommand({
        Name: `${engine.aws.prefix}-failed`,
        EventBusName: engine.aws.names.eventBus,
        EventPattern: JSON.stringify({ source: ['harvester'], 'detail-type': [RUN_EVENT_TYPES.failed] }),
      }),
    );
    await engine.aws.clients.events.send(
      new PutTargetsCommand({
        Rule: `${engine.aws.prefix}-failed`,
        EventBusName: engine.aws.names.eventBus,
        Targets: [{ Id: 'observer', Arn: Attributes!.QueueArn! }],
      }),
    );
    source.control.setProfile('unauthorized');
    engine.runtime({ workers: 1 }).start();

    await putRestSource('denied');
    const started = await startRun(engine.deps, { sourceId: 'denied', mode: 'full' });
    const run = await waitForRun(engine.deps, started.runId);

    expect(run.state).toBe('failed');
    expect(run.failure?.reason).toBe('page_failed');
    expect(run.failure?.message).toMatch(/page 1 could not be fetched: .*401/);
    expect((await engine.deps.sources.require('denied')).activeRunId).toBeNull();
    const { Messages = [] } = await engine.aws.clients.sqs.send(
      new ReceiveMessageCommand({ QueueUrl: observer.QueueUrl, WaitTimeSeconds: 2, MaxNumberOfMessages: 10 }),
    );
    const events = Messages.map((m) => JSON.parse(m.Body!));
    expect(events).toContainEqual(
      expect.objectContaining({
        'detail-type': RUN_EVENT_TYPES.failed,
        detail: expect.objectContaining({ runId: run.runId }),
      }),
    );
    source.control.setProfile('none');
  });
});

describe('the redrive drain', () => {
  it('turns a malformed message into a dead_letters entry', async () => {
    await engine.aws.clients.sqs.send(
      new SendMessageCommand({
        QueueUrl: engine.aws.resources.pageQueueUrl,
        MessageBody: '{"v":1,"runId":"x","page":"one"}',
      }),
    );

    const deadline = Date.now() + 60_000;
    let entries = await engine.deps.deadLetters.listAll(UNKNOWN_SOURCE);
    while (entries.length === 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      entries = await engine.deps.deadLetters.listAll(UNKNOWN_SOURCE);
    }

    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ kind: 'page', errorClass: 'permanent', runId: 'x' });
    expect(entries[0]!.reason).toMatch(/malformed page message: .*page/);
    expect(entries[0]!.excerpt).toContain('"page":"one"');
    expect(entries[0]!.attempts).toBeGreaterThanOrEqual(5);
  });
});
