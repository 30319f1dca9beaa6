import {
  GetScheduleCommand,
  ListSchedulesCommand,
  type SchedulerClient,
  ValidationException,
} from '@aws-sdk/client-scheduler';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { ulid } from 'ulid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiDeps } from '../../lib/api/deps.js';
import { apiGatewayEvent } from '../../lib/api/event.js';
import { handleApiRequest } from '../../lib/api/handler.js';
import { destroyAwsClients } from '../../lib/aws/clients.js';
import { SourceSchedules } from '../../lib/queue/source-schedules.js';
import type { SourceStore } from '../../lib/store/sources.js';
import { callApi, setUpTestApi } from '../support/api.js';
import type { TestAws } from '../support/aws.js';

/**
 * A source write is one consistent change: a failure injected at each step (the Sources row,
 * each schedule create, update and delete) leaves the row and the Scheduler schedules exactly
 * as they were, for a new source and for a reconfigured one.
 */

let aws: TestAws;
let deps: ApiDeps;

beforeAll(async () => {
  ({ aws, deps } = await setUpTestApi('source-writes'));
});
afterAll(() => destroyAwsClients(aws.clients));

const CONFIG = {
  url: 'http://127.0.0.1:9/records',
  itemsPath: 'data',
  idField: 'id',
  updatedAtField: 'updatedAt',
  pagination: { type: 'cursor', cursorParam: 'cursor', nextCursorPath: 'next_cursor' },
};

type Command = 'CreateScheduleCommand' | 'UpdateScheduleCommand' | 'DeleteScheduleCommand';

/** A Scheduler client that refuses the n-th (1-based) command of one kind, once, as Scheduler would. */
function failingScheduler(command: Command, nth: number): SchedulerClient {
  const real = aws.clients.scheduler;
  let seen = 0;
  return {
    send(input: { constructor: { name: string } }) {
      if (input.constructor.name === command && ++seen === nth)
        return Promise.reject(
          new ValidationException({
            message: 'injected refusal',
            Message: 'injected refusal',
            $metadata: {},
          }),
        );
      return real.send(input as never);
    },
  } as unknown as SchedulerClient;
}

function withScheduler(scheduler: SchedulerClient): ApiDeps {
  return { ...deps, schedules: new SourceSchedules(scheduler, deps.schedules.options) };
}

function withFailingSourcePut(): ApiDeps {
  const sources = Object.create(deps.sources) as SourceStore;
  sources.put = () => Promise.reject(new Error('injected: DynamoDB unavailable'));
  return { ...deps, sources };
}

const put = (d: ApiDeps, id: string, config: object, schedules: object[]) =>
  callApi(d, 'PUT', `/sources/${id}`, { connector: 'rest-json', config, schedules });

/** The source's row as stored, and its schedules as Scheduler holds them. */
async function state(id: string) {
  const { Item } = await aws.clients.doc.send(
    new GetCommand({ TableName: aws.names.sourcesTable, Key: { sourceId: id }, ConsistentRead: true }),
  );
  const { Schedules = [] } = await aws.clients.scheduler.send(
    new ListSchedulesCommand({ GroupName: aws.names.scheduleGroup, NamePrefix: `src-${id}-` }),
  );
  const schedules = await Promise.all(
    Schedules.map(async (s) => {
      const d = await aws.clients.scheduler.send(
        new GetScheduleCommand({ Name: s.Name, GroupName: aws.names.scheduleGroup }),
      );
      return { name: d.Name, expression: d.ScheduleExpression, input: d.Target?.Input };
    }),
  );
  return { row: Item, schedules: schedules.sort((a, b) => a.name!.localeCompare(b.name!)) };
}

const hourly = { expression: 'rate(1 hour)', mode: 'incremental' };
const nightly = { expression: 'cron(0 3 * * ? *)', mode: 'full' };
const weekly = { expression: 'rate(7 days)', mode: 'reconciliation' };
const changedConfig = { ...CONFIG, url: 'http://127.0.0.1:9/other' };

interface Step {
  name: string;
  deps: () => ApiDeps;
  /** Schedules of the existing source before the failing request. */
  before: object[];
  /** Schedules the failing request asks for. */
  after: object[];
}

const STEPS: Step[] = [
  { name: 'the Sources row', deps: withFailingSourcePut, before: [hourly], after: [nightly] },
  {
    name: 'the first schedule create',
    deps: () => withScheduler(failingScheduler('CreateScheduleCommand', 1)),
    before: [hourly],
    after: [hourly, nightly, weekly],
  },
  {
    name: 'a later schedule create, after an earlier one succeeded',
    deps: () => withScheduler(failingScheduler('CreateScheduleCommand', 2)),
    before: [hourly],
    after: [hourly, nightly, weekly],
  },
  {
    name: 'a schedule update',
    deps: () => withScheduler(failingScheduler('UpdateScheduleCommand', 1)),
    before: [hourly, nightly],
    after: [weekly, nightly],
  },
  {
    name: 'a schedule delete, after an update succeeded',
    deps: () => withScheduler(failingScheduler('DeleteScheduleCommand', 1)),
    before: [hourly, nightly, weekly],
    after: [nightly],
  },
];

describe('a source write that fails part-way', () => {
  it.each(STEPS)('at $name leaves a reconfigured source and its schedules unchanged', async (step) => {
    const id = `w-${ulid().toLowerCase()}`;
    expect((await put(deps, id, CONFIG, step.before)).status).toBe(201);
    const before = await state(id);
    expect(before.schedules).toHaveLength(step.before.length);

    const res = await put(step.deps(), id, changedConfig, step.after);

    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(await state(id)).toEqual(before);
  });

  it.each(STEPS.slice(0, 3))('at $name leaves no trace of a new source', async (step) => {
    const id = `w-${ulid().toLowerCase()}`;

    const res = await put(step.deps(), id, CONFIG, step.after);

    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(await state(id)).toEqual({ row: undefined, schedules: [] });
    const start = await handleApiRequest(
      apiGatewayEvent({
        method: 'POST',
        url: `/sources/${id}/runs`,
        headers: { 'content-type': 'application/json' },
        body: '{"mode":"full"}',
      }),
      deps,
    );
    expect(start.statusCode).toBe(404);
  });

  it('a Scheduler refusal answers 400 naming the schedule', async () => {
    const id = `w-${ulid().toLowerCase()}`;
    const res = await put(withScheduler(failingScheduler('CreateScheduleCommand', 2)), id, CONFIG, [
      hourly,
      nightly,
    ]);
    expect(res.status).toBe(400);
    expect(res.json.errors).toEqual([{ path: 'schedules.1.expression', message: 'injected refusal' }]);
  });

  it('without a failure, the row and the schedules both change (the test can tell)', async () => {
    const id = `w-${ulid().toLowerCase()}`;
    await put(deps, id, CONFIG, [hourly, nightly, weekly]);
    const before = await state(id);

    expect((await put(deps, id, changedConfig, [nightly])).status).toBe(200);

    const after = await state(id);
    expect(after.row!.config.url).toBe(changedConfig.url);
    expect(after.schedules.map((s) => s.expression)).toEqual([nightly.expression]);
    expect(after).not.toEqual(before);
  });
});

describe('a lone surrogate in a source body', () => {
  it('answers 400 naming the field, and writes neither the source nor its schedules', async () => {
    const id = `w-${ulid().toLowerCase()}`;
    const body = `{"connector":"rest-json","config":${JSON.stringify({ ...CONFIG, idField: 'id' }).replace(
      '"id"',
      '"\\ud800"',
    )},"schedules":[{"expression":"rate(1 minute)","mode":"incremental"}]}`;
    const res = await handleApiRequest(
      apiGatewayEvent({
        method: 'PUT',
        url: `/sources/${id}`,
        headers: { 'content-type': 'application/json' },
        body,
      }),
      deps,
    );
    expect(res.statusCode).toBe(400);
    expect(JSON.parse(res.body!).errors).toEqual([
      { path: 'config.idField', message: 'is not valid Unicode (it holds a lone surrogate)' },
    ]);
    expect(await state(id)).toEqual({ row: undefined, schedules: [] });
  });
});
