import { GetScheduleCommand } from '@aws-sdk/client-scheduler';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiDeps } from '../../lib/api/deps.js';
import { destroyAwsClients } from '../../lib/aws/clients.js';
import { runCli } from '../../lib/cli/main.js';
import { type DevServer, startDevServer } from '../../lib/local/dev-server.js';
import { LOCAL_START_RUN_ARN } from '../../lib/local/runtime.js';
import { ScheduleFirer } from '../../lib/local/schedule-firer.js';
import { setUpTestApi } from '../support/api.js';
import type { TestAws } from '../support/aws.js';
import { captureIo } from '../support/cli-io.js';
import { createQueuedRun } from '../support/harness.js';

/**
 * An operator reads when a source's schedules fire next and how its last runs went
 * (`sources get/list`), pauses them for a maintenance window (`sources pause`: Scheduler holds
 * them DISABLED, the local firer fires none) and resumes them (`sources resume`).
 */

let aws: TestAws;
let deps: ApiDeps;
let server: DevServer;
const SOURCE = 'paused-src';
const CONFIG = {
  url: 'http://127.0.0.1:9/records',
  idField: 'id',
  updatedAtField: 'updatedAt',
  pagination: { type: 'page' },
};

beforeAll(async () => {
  ({ aws, deps } = await setUpTestApi('pause'));
  server = await startDevServer({ deps });
});
afterAll(async () => {
  await server?.stop();
  destroyAwsClients(aws.clients);
});

async function cli(...args: string[]) {
  const io = captureIo();
  const code = await runCli(['node', 'harvester', '--endpoint', server.url, ...args], io);
  return { code, stdout: io.stdout(), stderr: io.stderr() };
}

async function stateOf(index: number): Promise<string | undefined> {
  const schedule = await aws.clients.scheduler.send(
    new GetScheduleCommand({ Name: `src-${SOURCE}-${index}`, GroupName: aws.names.scheduleGroup }),
  );
  return schedule.State;
}

describe('schedules in sources get/list, and sources pause/resume', () => {
  it('sources get shows each schedule’s next fire time, the last run and the last success', async () => {
    await cli(
      'sources',
      'put',
      SOURCE,
      '--connector',
      'rest-json',
      '--config',
      JSON.stringify(CONFIG),
      '--schedule',
      'rate(1 hour):incremental',
      '--schedule',
      'cron(0 3 * * ? *):full',
    );
    const finished = async (state: 'succeeded' | 'failed') => {
      const runId = await createQueuedRun(deps, SOURCE);
      await deps.runs.start(runId, 1, Date.now());
      await deps.lifecycle.finish({ runId, sourceId: SOURCE, epoch: 1, state, now: Date.now() });
      return runId;
    };
    const succeeded = await finished('succeeded');
    const failed = await finished('failed');
    const before = Date.now();

    const got = JSON.parse((await cli('sources', 'get', SOURCE, '--json')).stdout);
    const text = (await cli('sources', 'get', SOURCE)).stdout;

    const [rate, cron] = got.schedules;
    expect(rate.state).toBe('ENABLED');
    expect(Date.parse(rate.nextFireAt)).toBeGreaterThan(before);
    expect(Date.parse(rate.nextFireAt)).toBeLessThanOrEqual(before + 3_600_000 + 60_000);
    expect(cron.nextFireAt).toMatch(/T03:00:00\.000Z$/);
    expect(Date.parse(cron.nextFireAt) - before).toBeLessThanOrEqual(86_400_000);
    expect(got).toMatchObject({
      paused: false,
      lastRun: { runId: failed, state: 'failed' },
      lastSuccess: { runId: succeeded, state: 'succeeded' },
    });
    expect(text).toContain(`rate(1 hour) → incremental (next ${rate.nextFireAt})`);
    expect(text).toContain(`last run   ${failed} failed`);
    expect(text).toContain(`last ok    ${succeeded} succeeded`);
    const listed = (await cli('sources', 'list')).stdout;
    expect(listed.split('\n')[0]).toMatch(/NEXT FIRE\s+LAST RUN\s+LAST SUCCESS/);
    expect(listed).toContain([rate.nextFireAt, cron.nextFireAt].sort()[0]);
  });

  it('pause disables every Scheduler schedule, keeps them disabled through a source write, and the local firer fires none', async () => {
    let now = Date.now();
    const fired: string[] = [];
    const firer = new ScheduleFirer(
      aws.clients.scheduler,
      aws.names.scheduleGroup,
      new Map([[LOCAL_START_RUN_ARN, async (input: string) => void fired.push(input)]]),
      deps.logger,
      () => now,
    );
    await firer.tick(); // the firer first sees the schedules

    const paused = await cli('sources', 'pause', SOURCE);
    await cli(
      'sources',
      'schedule',
      SOURCE,
      '--schedule',
      'rate(1 hour):incremental',
      '--schedule',
      'cron(0 3 * * ? *):full',
    );
    now += 2 * 3_600_000;
    await firer.tick();

    expect(paused.code).toBe(0);
    expect(paused.stdout).toContain(`paused the schedules of ${SOURCE}`);
    expect([await stateOf(0), await stateOf(1)]).toEqual(['DISABLED', 'DISABLED']);
    expect(fired).toEqual([]);
    const got = JSON.parse((await cli('sources', 'get', SOURCE, '--json')).stdout);
    expect(got.paused).toBe(true);
    expect(
      got.schedules.map((s: { state: string; nextFireAt: string | null }) => [s.state, s.nextFireAt]),
    ).toEqual([
      ['DISABLED', null],
      ['DISABLED', null],
    ]);
    expect((await cli('sources', 'list')).stdout).toMatch(
      new RegExp(`${SOURCE}\\s+rest-json\\s+2\\s+paused`),
    );

    const resumed = await cli('sources', 'resume', SOURCE);
    await firer.tick();
    now += 31_000; // past the firer's detail cache: it sees the schedule enabled either way
    await firer.tick();
    const firedAtResume = fired.length;
    now += 3_600_000 + 1_000;
    await firer.tick();

    expect(resumed.code).toBe(0);
    expect([await stateOf(0), await stateOf(1)]).toEqual(['ENABLED', 'ENABLED']);
    // Resumed: it does not catch up on the fires it skipped, and fires again a period later.
    expect(firedAtResume).toBe(0);
    expect(fired.map((input) => JSON.parse(input).schedule)).toContain(`src-${SOURCE}-0`);
    expect(JSON.parse((await cli('sources', 'get', SOURCE, '--json')).stdout).paused).toBe(false);
  });

  it('pausing a source that does not exist answers 404', async () => {
    const res = await cli('sources', 'pause', 'no-such-source');
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('Source not found');
  });
});
