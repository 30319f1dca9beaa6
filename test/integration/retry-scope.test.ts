import { DeleteMessageCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { processPage } from '../../lib/engine/page-step.js';
import { startRun } from '../../lib/engine/start-run.js';
import { type FakeSource, startFakeSource } from '../../lib/local/fake-source/index.js';
import { parsePageMessage } from '../../lib/queue/page-message.js';
import { isTerminal, type RunMode, type SyncRun } from '../../lib/run/model.js';
import { fakeRestConfig, putSource, setUpTestEngine, type TestEngine } from '../support/harness.js';

/*
 * Retry-failed keeps the original scope (issue 10): a page that failed in an incremental run is
 * retried with that run's `since`, so the entities it held are refreshed — not the first page of
 * today's unfiltered listing.
 */

let engine: TestEngine;
let fake: FakeSource;

beforeAll(async () => {
  engine = await setUpTestEngine('retryscope');
  fake = await startFakeSource({ entities: 300, seed: 12 });
});
afterAll(async () => {
  await engine.stop();
  await fake.stop();
});

/** Runs `mode` on `sourceId` to its end, delivering its page messages by hand. */
async function runToEnd(sourceId: string, mode: RunMode): Promise<SyncRun> {
  const { runId } = await startRun(engine.deps, { sourceId, mode });
  for (let round = 0; round < 50; round++) {
    const run = await engine.deps.runs.require(runId);
    if (isTerminal(run.state)) return run;
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
      const message = parsePageMessage(m.Body!);
      if (message.runId === runId) await processPage(engine.deps, message);
    }
  }
  throw new Error(`run ${runId} did not end`);
}

describe('retry-failed of an incremental run’s failed page', () => {
  it('fetches it with the original run’s since, so the entities it held are brought up to date', async () => {
    const sourceId = 'retry-scope';
    await putSource(engine.deps, sourceId, 'rest-json', fakeRestConfig(fake.url));
    expect((await runToEnd(sourceId, 'full')).state).toBe('succeeded');
    const touched = fake.control.touch([5, 17, 42, 99, 150, 222, 280]).changed;

    // The incremental run's first page fails for good: it cannot continue past it.
    fake.control.setProfile({ perPathOverrides: { '/records': { forceStatus: 400 } } });
    const incremental = await runToEnd(sourceId, 'incremental');
    expect(incremental.failure?.reason).toBe('page_failed');
    const [entry] = (await engine.deps.deadLetters.listAll(sourceId)).filter((e) => e.kind === 'page');
    expect(entry?.scope).toMatchObject({ mode: 'incremental', since: expect.any(String) });

    fake.control.setProfile('none');
    const retry = await runToEnd(sourceId, 'dlq_retry');

    expect(retry.state).toBe('succeeded');
    for (const entity of touched) {
      expect((await engine.deps.items.get(sourceId, entity.id))?.version).toBe(entity.updatedAt);
    }
    expect(await engine.deps.deadLetters.listAll(sourceId)).toEqual([]);
  });
});
