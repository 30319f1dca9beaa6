import { ulid } from 'ulid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiDeps } from '../../lib/api/deps.js';
import { destroyAwsClients } from '../../lib/aws/clients.js';
import type { PageMessage } from '../../lib/queue/page-message.js';
import { fakeRestConfig } from '../../tools/fake-source/connector-config.js';
import { callApi, setUpTestApi } from '../support/api.js';
import type { TestAws } from '../support/aws.js';

/** Cancelling a run deletes its pending deferral schedules, and only its own. */

let aws: TestAws;
let deps: ApiDeps;
const HOUR = 3_600_000;

beforeAll(async () => {
  ({ aws, deps } = await setUpTestApi('cancel-deferrals'));
});
afterAll(() => destroyAwsClients(aws.clients));

const send = (method: string, url: string, body?: unknown) => callApi(deps, method, url, body);

/** A source with a started run whose page 2 is deferred beyond SQS's 15 minutes (a one-time schedule). */
async function runWithDeferral(sourceId: string): Promise<string> {
  expect(
    (
      await send('PUT', `/sources/${sourceId}`, {
        connector: 'rest-json',
        config: fakeRestConfig('http://127.0.0.1:9'),
      })
    ).status,
  ).toBe(201);
  const started = await send('POST', `/sources/${sourceId}/runs`, { mode: 'full' });
  expect(started.status).toBe(202);
  const runId = started.json.runId as string;
  const now = deps.clock.now();
  const message: PageMessage = { v: 1, runId, sourceId, epoch: 1, page: 2, cursor: 'c2', deferred: true };
  const enqueued = await deps.queue.sendAt(message, now + 2 * HOUR, now);
  expect(enqueued.via).toBe('schedule');
  return runId;
}

describe('POST /runs/{runId}/cancel', () => {
  it("deletes the run's pending deferral schedules and leaves other runs' alone", async () => {
    const cancelled = await runWithDeferral(`cancel-${ulid().toLowerCase()}`);
    const other = await runWithDeferral(`keep-${ulid().toLowerCase()}`);
    expect(await deps.deferrals!.namesFor(cancelled)).toHaveLength(1);

    const res = await send('POST', `/runs/${cancelled}/cancel`, {});

    expect(res.status).toBe(200);
    expect(res.json.state).toBe('cancelled');
    expect(await deps.deferrals!.namesFor(cancelled)).toEqual([]);
    expect(await deps.deferrals!.namesFor(other)).toHaveLength(1);
  });
});
