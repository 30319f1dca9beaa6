import type { BuildMiddleware } from '@smithy/types';
import { beforeAll, describe, expect, it } from 'vitest';
import { type EngineDeps, processPage, startRun } from '../../lib/engine/index.js';
import { METRIC, type MetricName } from '../../lib/observability/metrics.js';
import { isTerminal, type RunMode, type SyncRun } from '../../lib/run/model.js';
import { RequestRefusedError } from '../../lib/store/errors.js';
import type { FakeSource } from '../../tools/fake-source/index.js';
import { fakeRestConfig, putSource, useEngineWithFakes } from '../support/harness.js';
import { takePageMessages } from '../support/page-messages.js';

/*
 * Runs of one chain end with DynamoDB's rules enforced (issue #31): the ending transaction of a
 * chain's last page once sent a value only a partitioned run's expression used, which moto took
 * and DynamoDB refuses, so no unsplit run (incremental, reconciliation, dlq_retry) could end on
 * AWS. With the strict layer on, each of them must end `succeeded` here too.
 */

let fake: FakeSource;
/** When set, each item write leaves with one expression value too many (a request-shape defect). */
let addUnusedValue = false;

/** Runs on the wire request before the strict layer: the defect the last test plants. */
const planting: BuildMiddleware<object, object> = (next) => async (args) => {
  const request = args.request as { headers: Record<string, string>; body: unknown };
  const target = String(request.headers['x-amz-target']);
  if (addUnusedValue && target.endsWith('.UpdateItem')) {
    const body = JSON.parse(Buffer.from(request.body as Uint8Array).toString('utf8'));
    if (body.TableName === engine.aws.names.itemsTable) {
      body.ExpressionAttributeValues[':harvesterUnused'] = { N: '0' };
      request.body = JSON.stringify(body);
      request.headers['content-length'] = String(Buffer.byteLength(request.body as string));
    }
  }
  return next(args);
};

const { engine, startFake } = useEngineWithFakes('strictend', { workers: 0 });
beforeAll(async () => {
  fake = await startFake({ entities: 60, seed: 31 });
  engine.aws.clients.dynamo.middlewareStack.add(planting as never, {
    step: 'build',
    priority: 'high',
    name: 'testPlanting',
  });
});

/** A source of its own for each test, synced once in full, so each run below stands alone. */
async function syncedSource(sourceId: string): Promise<string> {
  await putSource(engine.deps, sourceId, 'rest-json', fakeRestConfig(fake.url));
  expect((await runToEnd(sourceId, 'full')).state).toBe('succeeded');
  return sourceId;
}

/** Receives and deletes every page message now visible in the queue. */
const takeMessages = () => takePageMessages(engine.aws);

/** Runs `mode` to its end, delivering its page messages by hand; a page that throws fails the test. */
async function runToEnd(sourceId: string, mode: RunMode): Promise<SyncRun> {
  const { runId } = await startRun(engine.deps, { sourceId, mode });
  for (let round = 0; round < 50; round++) {
    const run = await engine.deps.runs.require(runId);
    if (isTerminal(run.state)) return run;
    for (const message of await takeMessages()) {
      if (message.runId === runId) await processPage(engine.deps, message);
    }
  }
  throw new Error(`run ${runId} did not end`);
}

describe('with DynamoDB’s request rules enforced', () => {
  it('the engine’s DynamoDB client carries the strict layer', () => {
    expect(engine.aws.clients.dynamo.middlewareStack.identify()).toContainEqual(
      expect.stringContaining('harvesterStrictDynamoDB'),
    );
  });

  it('a single-chain incremental run ends succeeded', async () => {
    const sourceId = await syncedSource('strict-incremental');
    fake.control.touch([3, 30, 50]);

    const run = await runToEnd(sourceId, 'incremental');

    expect(run.state).toBe('succeeded');
  });

  it('a reconciliation run ends succeeded', async () => {
    const sourceId = await syncedSource('strict-reconciliation');

    const run = await runToEnd(sourceId, 'reconciliation');

    expect(run.state).toBe('succeeded');
  });

  it('a dlq_retry run ends succeeded', async () => {
    const sourceId = await syncedSource('strict-dlq-retry');
    fake.control.setProfile({ perPathOverrides: { '/records': { forceStatus: 400 } } });
    expect((await runToEnd(sourceId, 'incremental')).failure?.reason).toBe('page_failed');
    fake.control.setProfile('none');

    const run = await runToEnd(sourceId, 'dlq_retry');

    expect(run.state).toBe('succeeded');
    expect(await engine.deps.deadLetters.listAll(sourceId)).toEqual([]);
  });

  it('an item write refused for its shape fails the page, counted as a refused request', async () => {
    await putSource(engine.deps, 'strict-refused', 'rest-json', fakeRestConfig(fake.url));
    const counted: MetricName[] = [];
    const deps = {
      ...engine.deps,
      metrics: {
        ...engine.deps.metrics,
        count: (name: MetricName) => {
          counted.push(name);
        },
      } as EngineDeps['metrics'],
    };
    const { runId } = await startRun(engine.deps, { sourceId: 'strict-refused', mode: 'incremental' });
    const [first] = (await takeMessages()).filter((message) => message.runId === runId);
    addUnusedValue = true;

    const failure = await processPage(deps, first!).then(
      () => undefined,
      (error: unknown) => error,
    );
    addUnusedValue = false;

    expect(failure).toBeInstanceOf(RequestRefusedError);
    expect(counted).toContain(METRIC.requestsRefused);
    expect(await engine.deps.deadLetters.listAll('strict-refused')).toEqual([]);
  });
});
