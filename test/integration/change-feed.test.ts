import { Writable } from 'node:stream';
import { PutRuleCommand, PutTargetsCommand } from '@aws-sdk/client-eventbridge';
import { CreateQueueCommand, GetQueueAttributesCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildProgram } from '../../lib/cli/main.js';
import { startRun } from '../../lib/engine/index.js';
import { DETAIL_TYPES, EntityEventDetailSchema, RunEventDetailSchema } from '../../lib/events/details.js';
import type { FakeSource } from '../../tools/fake-source/index.js';
import { fakeRestConfig, putSource, useEngineWithFakes, waitForRun } from '../support/harness.js';

/**
 * The change feed on the local runtime: the Items table's stream (on the emulator) read and turned
 * into `Entity Changed` / `Entity Tombstoned` events on the Harvester bus, as the stack's pipes do.
 */

let fake: FakeSource;
let queueUrl: string;

const { engine, startFake } = useEngineWithFakes('change-feed', {
  workers: 2,
  bootstrap: { changeFeed: true },
  runtime: { changeFeed: { includeData: false } },
});
beforeAll(async () => {
  fake = await startFake({ entities: 30, seed: 2121, latencyMs: 0 });
  const { sqs, events } = engine.aws.clients;
  queueUrl = (await sqs.send(new CreateQueueCommand({ QueueName: `${engine.aws.prefix}-observer` })))
    .QueueUrl!;
  const { Attributes } = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }),
  );
  const rule = `${engine.aws.prefix}-all`;
  await events.send(
    new PutRuleCommand({
      Name: rule,
      EventBusName: engine.aws.names.eventBus,
      EventPattern: JSON.stringify({ source: ['harvester'] }),
    }),
  );
  await events.send(
    new PutTargetsCommand({
      Rule: rule,
      EventBusName: engine.aws.names.eventBus,
      Targets: [{ Id: 'observer', Arn: Attributes!.QueueArn! }],
    }),
  );
});
afterAll(async () => {
  await engine?.stop();
  await fake?.stop();
});

interface BusEvent {
  'detail-type': string;
  detail: Record<string, unknown>;
}

/** Events received until `enough` holds, then for `settleMs` more (so extra events would show). */
async function receive(enough: (events: BusEvent[]) => boolean, settleMs = 3_000): Promise<BusEvent[]> {
  const events: BusEvent[] = [];
  const deadline = Date.now() + 60_000;
  let settleUntil = Number.POSITIVE_INFINITY;
  while (Date.now() < Math.min(deadline, settleUntil)) {
    const { Messages = [] } = await engine.aws.clients.sqs.send(
      // Received once: a message left visible would come back after the visibility timeout.
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        WaitTimeSeconds: 1,
        MaxNumberOfMessages: 10,
        VisibilityTimeout: 3_600,
      }),
    );
    events.push(...Messages.map((m) => JSON.parse(m.Body!) as BusEvent));
    if (settleUntil === Number.POSITIVE_INFINITY && enough(events)) settleUntil = Date.now() + settleMs;
  }
  return events;
}

const ofType = (events: BusEvent[], type: string) => events.filter((e) => e['detail-type'] === type);

describe('the local change feed', () => {
  it('a run that changes 10 entities puts 10 Entity Changed events; unchanged re-reads put none', async () => {
    await putSource(engine.deps, 'feed', 'rest-json', fakeRestConfig(fake.url, { pageSize: 10 }));
    const full = await startRun(engine.deps, { sourceId: 'feed', mode: 'full' });
    await waitForRun(engine.deps, full.runId);
    const first = await receive((events) => ofType(events, DETAIL_TYPES.entityChanged).length >= 30);
    const touched = fake.control.touch([
      'e-000001',
      'e-000004',
      'e-000007',
      'e-000010',
      'e-000013',
      'e-000016',
      'e-000019',
      'e-000022',
      'e-000025',
      'e-000028',
    ]).changed;

    const incremental = await startRun(engine.deps, { sourceId: 'feed', mode: 'incremental' });
    const ended = await waitForRun(engine.deps, incremental.runId);
    const second = await receive((events) => ofType(events, DETAIL_TYPES.entityChanged).length >= 10);

    expect(ofType(first, DETAIL_TYPES.entityChanged)).toHaveLength(30);
    // Each change counts on its row: the first store is change 1, the next change of an entity 2.
    expect(new Set(ofType(first, DETAIL_TYPES.entityChanged).map((e) => e.detail.changeSequence))).toEqual(
      new Set([1]),
    );
    expect(new Set(ofType(second, DETAIL_TYPES.entityChanged).map((e) => e.detail.changeSequence))).toEqual(
      new Set([2]),
    );
    expect(ended.progress.processed).toBeGreaterThan(10);
    const changed = ofType(second, DETAIL_TYPES.entityChanged);
    expect(changed.map((e) => e.detail.entityId).sort()).toEqual(touched.map((e) => e.id).sort());
    for (const event of changed) {
      const detail = EntityEventDetailSchema.parse(event.detail);
      expect(detail).toMatchObject({ sourceId: 'feed', runId: incremental.runId, tombstonedAt: null });
      expect(detail.data).toBeUndefined();
    }
    const succeeded = ofType(second, DETAIL_TYPES.runSucceeded);
    expect(succeeded.map((e) => RunEventDetailSchema.parse(e.detail).runId)).toEqual([incremental.runId]);
  }, 180_000);

  it('a reconciliation that tombstones 2 entities puts 2 Entity Tombstoned events', async () => {
    fake.control.delete(['e-000002', 'e-000003']);
    const run = await startRun(engine.deps, { sourceId: 'feed', mode: 'reconciliation' });
    await waitForRun(engine.deps, run.runId);
    const events = await receive((all) => ofType(all, DETAIL_TYPES.entityTombstoned).length >= 2);

    const tombstoned = ofType(events, DETAIL_TYPES.entityTombstoned);
    expect(tombstoned.map((e) => e.detail.entityId).sort()).toEqual(['e-000002', 'e-000003']);
    expect(tombstoned.every((e) => EntityEventDetailSchema.parse(e.detail).tombstonedAt !== null)).toBe(true);
    // Stored once, never touched, then tombstoned: the tombstone is the entity's second change.
    expect(tombstoned.map((e) => e.detail.changeSequence)).toEqual([2, 2]);
    expect(ofType(events, DETAIL_TYPES.entityChanged)).toEqual([]);
  }, 180_000);

  it('harvester events tail prints the events as they arrive', async () => {
    let printed = '';
    const io = {
      out: new Writable({
        write: (chunk, _e, done) => {
          printed += String(chunk);
          done();
        },
      }),
      err: new Writable({ write: (_c, _e, done) => done() }),
    };
    Object.assign(process.env, {
      AWS_ENDPOINT_URL: engine.aws.endpoint,
      HARVESTER_PREFIX: engine.aws.prefix,
      AWS_REGION: 'us-east-1',
    });
    const tail = buildProgram(io).parseAsync([
      'node',
      'harvester',
      'events',
      'tail',
      '--type',
      'Entity Changed',
      '--for',
      '20',
    ]);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    fake.control.touch(['e-000029']);
    const run = await startRun(engine.deps, { sourceId: 'feed', mode: 'incremental' });
    await waitForRun(engine.deps, run.runId);
    await tail;

    expect(printed).toMatch(/Entity Changed\s+feed\/e-000029 version \S+ \(run [0-9A-Z]{26}\)/);
    expect(printed).not.toContain('SyncRun');
  }, 120_000);
});
