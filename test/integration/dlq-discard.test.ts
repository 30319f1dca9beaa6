import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiDeps } from '../../lib/api/deps.js';
import { apiGatewayEvent } from '../../lib/api/event.js';
import { handleApiRequest } from '../../lib/api/handler.js';
import { runView } from '../../lib/api/views.js';
import { runCli } from '../../lib/cli/main.js';
import { loadConfig } from '../../lib/config/env.js';
import { type DevServer, startDevServer } from '../../lib/local/dev-server.js';
import { captureIo } from '../support/cli-io.js';
import { fakeRestConfig, putSource, useEngineWithFakes } from '../support/harness.js';

/**
 * An operator triages a run's dead letters: reads one in full (`dlq show`), gives up on it with a
 * reason (`dlq discard`); it stays as an audit record and stops counting as open everywhere the
 * product counts: the run's "K in DLQ", `dlq list`, and retry-failed.
 */

const setup = useEngineWithFakes('dlq-discard');
const { engine } = setup;
let server: DevServer;
const SOURCE = 'discard-src';
const BROKEN = 3;

async function cli(...args: string[]) {
  const io = captureIo();
  const code = await runCli(['node', 'harvester', '--endpoint', server.url, ...args], io);
  return { code, stdout: io.stdout(), stderr: io.stderr() };
}

beforeAll(async () => {
  const config = loadConfig({
    HARVESTER_PREFIX: engine.aws.prefix,
    AWS_ENDPOINT_URL: engine.aws.endpoint,
    LOG_LEVEL: 'SILENT',
  });
  server = await startDevServer({
    deps: createApiDeps(engine.deps, { config, scheduler: engine.aws.clients.scheduler }),
  });
});
afterAll(async () => {
  await server?.stop();
});

describe('dlq show and dlq discard', () => {
  let runId: string;
  let entryIds: string[];
  let fake: Awaited<ReturnType<typeof setup.startFake>>;

  it('shows a dead letter in full: the whole reason, the record as exact JSON, attempts, history', async () => {
    fake = await setup.startFake({ entities: 40, seed: 4711, profile: { invalidRecords: BROKEN } });
    await putSource(engine.deps, SOURCE, 'rest-json', fakeRestConfig(fake.url));
    runId = (await setup.runToEnd(SOURCE, 'full')).runId;
    const listed = JSON.parse((await cli('dlq', 'list', SOURCE, '--json')).stdout);
    entryIds = listed.items.map((e: { entryId: string }) => e.entryId);
    expect(entryIds).toHaveLength(BROKEN);

    const shown = await cli('dlq', 'show', SOURCE, entryIds[0]!);
    const json = JSON.parse((await cli('dlq', 'show', SOURCE, entryIds[0]!, '--json')).stdout);

    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain(`entry:     ${entryIds[0]} (open)`);
    expect(shown.stdout).toContain('attempts:  ');
    expect(shown.stdout).toMatch(/reason:\n {2}\S/);
    expect(shown.stdout).toMatch(/record:\n {2}\{/);
    expect(shown.stdout).toMatch(/history:\n {2}\S+ {2}first_failure run /);
    expect(json).toMatchObject({ entryId: entryIds[0], state: 'open', discard: null, runId });
    expect(json.record).toEqual(expect.any(Object));
    expect(json.reason.length).toBeGreaterThan(0);
  });

  it('a bare entity id names its item entry', async () => {
    const ref = entryIds[0]!.slice('item#'.length);
    const shown = await cli('dlq', 'show', SOURCE, ref);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain(`entry:     ${entryIds[0]} (open)`);
  });

  it('discard keeps the entry as an audit record and it stops counting as open', async () => {
    const before = await runView(engine.deps, (await engine.deps.runs.get(runId))!);

    const res = await cli('dlq', 'discard', SOURCE, entryIds[0]!, '--reason', 'deleted upstream');

    expect(res.code).toBe(0);
    expect(res.stdout).toContain(`discarded ${entryIds[0]} of ${SOURCE}: deleted upstream`);
    const after = await runView(engine.deps, (await engine.deps.runs.get(runId))!);
    expect(before.openDeadLetters).toBe(BROKEN);
    expect(after.openDeadLetters).toBe(BROKEN - 1);
    // The run's fixed count stays; the live count beside it drops.
    expect(after.outcome?.deadLettersFiled).toBe(BROKEN);
    expect(after.summary).toContain(
      `${BROKEN} dead letters filed (live: ${BROKEN - 1} still open as this run's;`,
    );
    const open = JSON.parse((await cli('dlq', 'list', SOURCE, '--json')).stdout).items;
    const byRun = JSON.parse((await cli('dlq', 'list', SOURCE, '--run', runId, '--json')).stdout).items;
    const discarded = JSON.parse(
      (await cli('dlq', 'list', SOURCE, '--state', 'discarded', '--json')).stdout,
    ).items;
    expect(open.map((e: { entryId: string }) => e.entryId)).toEqual(entryIds.slice(1));
    expect(byRun).toHaveLength(BROKEN - 1);
    expect(discarded.map((e: { entryId: string }) => e.entryId)).toEqual([entryIds[0]]);
    const shown = JSON.parse((await cli('dlq', 'show', SOURCE, entryIds[0]!, '--json')).stdout);
    expect(shown).toMatchObject({
      state: 'discarded',
      discard: { by: null, reason: 'deleted upstream' },
    });
    expect(shown.history.at(-1)).toMatchObject({ event: 'discarded', reason: 'deleted upstream' });
  });

  it('discarding it again answers 409 with when, by whom and why it was discarded', async () => {
    const res = await cli('dlq', 'discard', SOURCE, entryIds[0]!, '--reason', 'again');
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/Dead letter already discarded: .*discarded already, at .*: deleted upstream/);
  });

  it('an entry that is not there answers 404, saying a retry may have resolved it', async () => {
    const res = await cli('dlq', 'discard', SOURCE, 'item#no-such-entity', '--reason', 'x');
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('never recorded, or a retry resolved it');
  });

  it('retry-failed leaves the discarded entry alone and retries the open ones', async () => {
    const attemptsOf = async (entryId: string) =>
      (await engine.deps.deadLetters.get(SOURCE, entryId))!.attempts;
    const [discardedBefore, openBefore] = [await attemptsOf(entryIds[0]!), await attemptsOf(entryIds[1]!)];

    const retry = await runView(engine.deps, await setup.runToEnd(SOURCE, 'dlq_retry'));

    expect(await attemptsOf(entryIds[0]!)).toBe(discardedBefore);
    expect(await attemptsOf(entryIds[1]!)).toBeGreaterThan(openBefore);
    expect(retry.openDeadLetters).toBe(BROKEN - 1);
    expect((await engine.deps.deadLetters.get(SOURCE, entryIds[0]!))!.state).toBe('discarded');
  });

  it('records the IAM identity API Gateway vouches for as who discarded', async () => {
    const event = apiGatewayEvent({
      method: 'POST',
      url: `/sources/${SOURCE}/dead-letters/${encodeURIComponent(entryIds[1]!)}/discard`,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ reason: 'known bad record' }),
    });
    const arn = 'arn:aws:sts::123456789012:assumed-role/Ops/alice';
    (event.requestContext as unknown as Record<string, unknown>).authorizer = { iam: { userArn: arn } };
    const config = loadConfig({ HARVESTER_PREFIX: engine.aws.prefix, LOG_LEVEL: 'SILENT' });
    const deps = createApiDeps(engine.deps, { config, scheduler: engine.aws.clients.scheduler });

    const response = await handleApiRequest(event, deps);

    expect(response.statusCode).toBe(200);
    expect(JSON.parse(response.body!)).toMatchObject({ state: 'discarded', discard: { by: arn } });
  });

  it('a new failure opens a discarded entry again, keeping the discard on record', async () => {
    const entry = (await engine.deps.deadLetters.get(SOURCE, entryIds[0]!))!;
    await engine.deps.deadLetters.record({
      sourceId: SOURCE,
      kind: 'item',
      ref: entry.ref,
      errorClass: 'permanent',
      reason: 'still invalid',
      attempts: 1,
      runId: '01J9ZQ4T7J8Y2K3M4N5P6Q7R8S',
      page: 1,
      now: Date.now(),
    });

    const shown = JSON.parse((await cli('dlq', 'show', SOURCE, entryIds[0]!, '--json')).stdout);

    expect(shown).toMatchObject({ state: 'open', discard: { reason: 'deleted upstream' } });
    expect(shown.history.map((e: { event: string }) => e.event)).toEqual([
      'first_failure',
      'discarded',
      'last_failure',
    ]);
  });

  it('discarding an entry a retry has resolved answers 410, naming the run that stored the entity', async () => {
    fake.control.setProfile('none');
    const retry = await setup.runToEnd(SOURCE, 'dlq_retry');
    const resolved = entryIds[2]!;
    expect(await engine.deps.deadLetters.get(SOURCE, resolved)).toBeUndefined();

    const res = await cli('dlq', 'discard', SOURCE, resolved, '--reason', 'too late');
    const json = JSON.parse(
      (await cli('dlq', 'discard', SOURCE, resolved, '--reason', 'x', '--json')).stderr,
    );

    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`Dead letter already resolved: dead letter ${resolved} of source ${SOURCE}`);
    expect(res.stderr).toContain(
      `dlq_retry run ${retry.runId} stored entity ${resolved.slice('item#'.length)}`,
    );
    expect(json).toMatchObject({ status: 410, runId: retry.runId });
  });
});
