import { GetScheduleCommand, ListSchedulesCommand, type SchedulerClient } from '@aws-sdk/client-scheduler';
import { ulid } from 'ulid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiDeps } from '../../lib/api/deps.js';
import { apiGatewayEvent } from '../../lib/api/event.js';
import { handleApiRequest } from '../../lib/api/handler.js';
import { destroyAwsClients } from '../../lib/aws/clients.js';
import {
  LOCAL_SCHEDULER_ROLE_ARN,
  type ScheduledStartOutcome,
  startScheduledRun,
} from '../../lib/engine/index.js';
import { LOCAL_START_RUN_ARN } from '../../lib/local/runtime.js';
import { ScheduleFirer } from '../../lib/local/schedule-firer.js';
import { setUpTestApi } from '../support/api.js';
import type { TestAws } from '../support/aws.js';

let aws: TestAws;
let deps: ApiDeps;

beforeAll(async () => {
  ({ aws, deps } = await setUpTestApi('schedules'));
});
afterAll(() => destroyAwsClients(aws.clients));

const REST_CONFIG = {
  url: 'http://127.0.0.1:9/records',
  itemsPath: 'data',
  idField: 'id',
  updatedAtField: 'updatedAt',
  pagination: { type: 'cursor', cursorParam: 'cursor', nextCursorPath: 'next_cursor' },
};

async function putSource(id: string, schedules: { expression: string; mode: string }[]) {
  const body = JSON.stringify({ connector: 'rest-json', config: REST_CONFIG, schedules });
  const event = apiGatewayEvent({
    method: 'PUT',
    url: `/sources/${id}`,
    headers: { 'content-type': 'application/json' },
    body,
  });
  return handleApiRequest(event, deps);
}

async function schedulesOf(id: string) {
  const { Schedules = [] } = await aws.clients.scheduler.send(
    new ListSchedulesCommand({ GroupName: aws.names.scheduleGroup, NamePrefix: `src-${id}-` }),
  );
  const details = await Promise.all(
    Schedules.map((s) =>
      aws.clients.scheduler.send(
        new GetScheduleCommand({ Name: s.Name, GroupName: aws.names.scheduleGroup }),
      ),
    ),
  );
  return details
    .map((d) => ({
      name: d.Name,
      expression: d.ScheduleExpression,
      arn: d.Target?.Arn,
      role: d.Target?.RoleArn,
      input: d.Target?.Input,
    }))
    .sort((a, b) => String(a.name).localeCompare(String(b.name)));
}

describe('source schedules', () => {
  it('a source created with a schedule gets a recurring Scheduler schedule that starts its runs', async () => {
    const id = `sched-${ulid().toLowerCase()}`;
    expect((await putSource(id, [{ expression: 'rate(1 minute)', mode: 'incremental' }])).statusCode).toBe(
      201,
    );
    expect(await schedulesOf(id)).toEqual([
      {
        name: `src-${id}-0`,
        expression: 'rate(1 minute)',
        arn: LOCAL_START_RUN_ARN,
        role: LOCAL_SCHEDULER_ROLE_ARN,
        // Scheduler fills in the firing's time and invocation id, which the start-run target reads.
        input: JSON.stringify({
          sourceId: id,
          mode: 'incremental',
          schedule: `src-${id}-0`,
          scheduledTime: '<aws.scheduler.scheduled-time>',
          executionId: '<aws.scheduler.execution-id>',
        }),
      },
    ]);
  });

  it('updating the source creates new, updates changed and deletes removed schedules', async () => {
    const id = `sched-${ulid().toLowerCase()}`;
    await putSource(id, [
      { expression: 'rate(1 hour)', mode: 'incremental' },
      { expression: 'cron(0 3 * * ? *)', mode: 'full' },
      { expression: 'rate(1 day)', mode: 'reconciliation' },
    ]);
    const report = await deps.schedules.reconcile(id, [
      { expression: 'rate(1 hour)', mode: 'incremental' },
      { expression: 'cron(0 4 * * ? *)', mode: 'full' },
    ]);
    expect(report).toEqual({
      created: [],
      updated: [`src-${id}-1`],
      deleted: [`src-${id}-2`],
      unchanged: [`src-${id}-0`],
    });
    expect((await schedulesOf(id)).map((s) => s.expression)).toEqual(['rate(1 hour)', 'cron(0 4 * * ? *)']);

    const grown = await deps.schedules.reconcile(id, [
      { expression: 'rate(1 hour)', mode: 'incremental' },
      { expression: 'cron(0 4 * * ? *)', mode: 'full' },
      { expression: 'rate(6 hours)', mode: 'full' },
    ]);
    expect(grown.created).toEqual([`src-${id}-2`]);
  });

  it('leaves the schedules of a source whose id extends another one alone', async () => {
    const id = `sched-${ulid().toLowerCase()}`;
    await putSource(id, [{ expression: 'rate(1 hour)', mode: 'full' }]);
    await putSource(`${id}-1`, [{ expression: 'rate(2 hours)', mode: 'full' }]);
    await deps.schedules.remove(id);
    expect(await deps.schedules.names(id)).toEqual([]);
    expect(await deps.schedules.names(`${id}-1`)).toEqual([`src-${id}-1-0`]);
  });

  it('a firer tick fires a due schedule, which starts a run; a busy source is skipped', async () => {
    const id = `sched-${ulid().toLowerCase()}`;
    await putSource(id, [{ expression: 'rate(1 minute)', mode: 'incremental' }]);
    let now = Date.now();
    const outcomes: ScheduledStartOutcome[] = [];
    const targets = new Map([
      [
        LOCAL_START_RUN_ARN,
        async (input: string) => void outcomes.push(await startScheduledRun(deps, input)),
      ],
    ]);
    const firer = new ScheduleFirer(
      aws.clients.scheduler,
      aws.names.scheduleGroup,
      targets,
      deps.logger,
      () => now,
    );

    expect(await firer.tick()).not.toContain(`src-${id}-0`); // first sight: a period has not passed yet
    now += 61_000;
    expect(await firer.tick()).toContain(`src-${id}-0`);
    const runs = (await deps.runs.listBySource(id)).items;
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ mode: 'incremental', state: 'queued', trigger: `schedule:src-${id}-0` });

    now += 61_000;
    await firer.tick();
    expect(outcomes.filter((o) => !o.started)).toContainEqual({
      started: false,
      reason: 'source_busy',
      activeRunId: runs[0]!.runId,
    });
    expect((await deps.runs.listBySource(id)).items).toHaveLength(1);
  });

  it('a cron schedule fires at its calendar time, once per occurrence', async () => {
    const id = `sched-${ulid().toLowerCase()}`;
    await putSource(id, [{ expression: 'cron(0/15 * * * ? *)', mode: 'full' }]);
    let now = Date.parse('2026-12-01T10:07:00Z');
    const fired: string[] = [];
    const targets = new Map([[LOCAL_START_RUN_ARN, async (input: string) => void fired.push(input)]]);
    const firer = new ScheduleFirer(
      aws.clients.scheduler,
      aws.names.scheduleGroup,
      targets,
      deps.logger,
      () => now,
    );
    const name = `src-${id}-0`;

    expect(await firer.tick()).not.toContain(name);
    now = Date.parse('2026-12-01T10:14:59Z');
    expect(await firer.tick()).not.toContain(name);
    now = Date.parse('2026-12-01T10:15:01Z');
    expect(await firer.tick()).toContain(name);
    now = Date.parse('2026-12-01T10:20:00Z');
    expect(await firer.tick()).not.toContain(name);
    now = Date.parse('2026-12-01T10:30:00Z');
    expect(await firer.tick()).toContain(name);
    // Each delivery names its occurrence's calendar time, not the tick's.
    expect(fired.map((input) => JSON.parse(input)).filter((input) => input.sourceId === id)).toEqual([
      {
        sourceId: id,
        mode: 'full',
        schedule: name,
        scheduledTime: '2026-12-01T10:15:00Z',
        executionId: expect.any(String),
      },
      {
        sourceId: id,
        mode: 'full',
        schedule: name,
        scheduledTime: '2026-12-01T10:30:00Z',
        executionId: expect.any(String),
      },
    ]);
  });

  it('an idle firer reads each schedule once per refresh period, not once per tick', async () => {
    const id = `sched-${ulid().toLowerCase()}`;
    await putSource(id, [
      { expression: 'rate(1 hour)', mode: 'incremental' },
      { expression: 'cron(0 3 * * ? *)', mode: 'full' },
    ]);
    let gets = 0;
    const counting = {
      send(command: { constructor: { name: string }; input: { Name?: string } }) {
        if (command.constructor.name === 'GetScheduleCommand' && command.input.Name?.startsWith(`src-${id}-`))
          gets += 1;
        return aws.clients.scheduler.send(command as never);
      },
    } as unknown as SchedulerClient;
    let now = Date.now();
    const firer = new ScheduleFirer(counting, aws.names.scheduleGroup, new Map(), deps.logger, () => now);

    for (let tick = 0; tick < 10; tick++) {
      await firer.tick();
      now += 1_000;
    }
    expect(gets).toBe(2);
    now += 30_000;
    await firer.tick();
    expect(gets).toBe(4);
  });

  it('deleting the source removes its schedules', async () => {
    const id = `sched-${ulid().toLowerCase()}`;
    await putSource(id, [
      { expression: 'rate(1 hour)', mode: 'incremental' },
      { expression: 'rate(2 hours)', mode: 'full' },
    ]);
    expect(await schedulesOf(id)).toHaveLength(2);
    const res = await handleApiRequest(apiGatewayEvent({ method: 'DELETE', url: `/sources/${id}` }), deps);
    expect(res.statusCode).toBe(200);
    expect(await schedulesOf(id)).toEqual([]);
  });

  it('a schedule that outlives its source, or carries a bad input, is skipped without throwing', async () => {
    expect(await startScheduledRun(deps, JSON.stringify({ sourceId: 'gone', mode: 'full' }))).toEqual({
      started: false,
      reason: 'source_not_found',
    });
    expect(await startScheduledRun(deps, '{"sourceId":""}')).toMatchObject({
      started: false,
      reason: 'invalid_input',
    });
  });
});
