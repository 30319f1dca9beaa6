import { PurgeQueueCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type AwsClients, createAwsClients, destroyAwsClients } from '../../lib/aws/clients.js';
import { DynamoFaults } from '../../lib/aws/dynamo-faults.js';
import { RELIABILITY } from '../../lib/config/constants.js';
import { reap } from '../../lib/engine/index.js';
import { TEST_REGION } from '../support/aws.js';
import { movableClock } from '../support/crash.js';
import { createQueuedRun, fakeRestConfig, putSource, useEngineWithFakes } from '../support/harness.js';

/**
 * The reaper finds its candidates on the active index, which DynamoDB never reads consistently:
 * with the fault layer making every index query lag, a run the reaper acted on a moment ago is
 * nominated again as it was before — and must be judged on what it is now.
 */
const clock = movableClock();
const { engine } = useEngineWithFakes('reaperstale', { workers: 0, clock });
const faults = new DynamoFaults({ seed: 31 });
let outOfBand: AwsClients;

beforeAll(async () => {
  outOfBand = createAwsClients({ region: TEST_REGION, endpoint: engine.aws.endpoint });
  faults.install(engine.aws.clients.dynamo, outOfBand.dynamo);
  await engine.aws.clients.sqs.send(new PurgeQueueCommand({ QueueUrl: engine.aws.resources.pageQueueUrl }));
});
afterAll(() => destroyAwsClients(outOfBand));

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

it('a reaper tick over a lagging index that shows a run as before its fence does not act on it again', async () => {
  await putSource(engine.deps, 'crashed', 'rest-json', fakeRestConfig('http://127.0.0.1:9'));
  const runId = await createQueuedRun(engine.deps, 'crashed');
  // A worker took page 1 and died: the chain's heartbeat goes silent.
  await engine.deps.runs.start(runId, 1, clock.now());
  await engine.deps.chains.claim({ runId }, 1, 1, clock.now());
  clock.advance(RELIABILITY.silenceThresholdMs + 1_000);
  faults.set({ seed: 31, staleRead: 1, staleMs: 30_000 });

  const first = await reap(engine.deps);
  const lagged = faults.counts.staleReads;
  const second = await reap(engine.deps);

  const mine = (report: typeof first) => report.actions.filter((a) => a.runId === runId);
  expect(mine(first)).toHaveLength(1);
  // The index answered the second tick as of before the fence...
  expect(faults.counts.staleReads).toBeGreaterThan(lagged);
  // ...and the reaper, reading the run itself, left the freshly fenced run alone.
  expect(mine(second)).toEqual([]);
  expect(await engine.deps.runs.require(runId)).toMatchObject({ epoch: 2, restarts: 1 });
  expect(await queued(runId)).toBe(1);
});
