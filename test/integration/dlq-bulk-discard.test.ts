import { ulid } from 'ulid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BULK_DISCARD_PER_CALL } from '../../lib/api/dead-letter-triage.js';
import { type ApiDeps, createApiDeps } from '../../lib/api/deps.js';
import { apiGatewayEvent } from '../../lib/api/event.js';
import { handleApiRequest } from '../../lib/api/handler.js';
import { runView } from '../../lib/api/views.js';
import { runCli } from '../../lib/cli/main.js';
import { loadConfig } from '../../lib/config/env.js';
import { type DevServer, startDevServer } from '../../lib/local/dev-server.js';
import type { ErrorClass } from '../../lib/retry/errors.js';
import type { DeadLetterStore } from '../../lib/store/dead-letters.js';
import { apiOver, callApi } from '../support/api.js';
import { captureIo } from '../support/cli-io.js';
import { fakeRestConfig, putSource, useEngineWithFakes, waitForRun } from '../support/harness.js';

/**
 * Triage at volume: an operator gives up on every open dead letter a filter matches — a run's,
 * an error class's, those whose reason says something, or all — in one command that counts them,
 * asks, and discards them call by call; each stays an audit record of who, when and why.
 */

const setup = useEngineWithFakes('dlq-bulk', { workers: 1 });
const { engine } = setup;
let server: DevServer;
let api: ApiDeps;
let fakeUrl: string;
const ARN = 'arn:aws:sts::123456789012:assumed-role/Ops/alice';

async function cli(...args: string[]) {
  const io = captureIo();
  const code = await runCli(['node', 'harvester', '--endpoint', server.url, ...args], io);
  return { code, stdout: io.stdout(), stderr: io.stderr() };
}

/** POST …/dead-letters/discard as API Gateway hands it over, the caller vouched for by IAM. */
async function bulkDiscard(deps: ApiDeps, sourceId: string, body: unknown) {
  const event = apiGatewayEvent({
    method: 'POST',
    url: `/sources/${sourceId}/dead-letters/discard`,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  (event.requestContext as unknown as Record<string, unknown>).authorizer = { iam: { userArn: ARN } };
  const response = await handleApiRequest(event, deps);
  return { status: response.statusCode, json: JSON.parse(response.body!) };
}

/** Files `count` item dead letters directly, as a run's pages would. */
async function file(
  sourceId: string,
  count: number,
  entry: { prefix: string; errorClass: ErrorClass; reason: string; runId?: string },
): Promise<string[]> {
  const runId = entry.runId ?? ulid();
  const refs = Array.from({ length: count }, (_, i) => `${entry.prefix}-${String(i).padStart(4, '0')}`);
  for (let i = 0; i < refs.length; i += 25)
    await Promise.all(
      refs.slice(i, i + 25).map((ref) =>
        engine.deps.deadLetters.record({
          sourceId,
          kind: 'item',
          ref,
          errorClass: entry.errorClass,
          reason: entry.reason,
          attempts: 1,
          runId,
          page: 1,
          now: Date.now(),
        }),
      ),
    );
  return refs.map((ref) => `item#${ref}`);
}

async function newSource(sourceId: string): Promise<void> {
  await putSource(engine.deps, sourceId, 'rest-json', fakeRestConfig(fakeUrl));
}

beforeAll(async () => {
  const config = loadConfig({
    HARVESTER_PREFIX: engine.aws.prefix,
    AWS_ENDPOINT_URL: engine.aws.endpoint,
    LOG_LEVEL: 'SILENT',
  });
  api = apiOver(engine);
  server = await startDevServer({
    deps: createApiDeps(engine.deps, { config, scheduler: engine.aws.clients.scheduler }),
  });
});
afterAll(async () => {
  await server?.stop();
});

describe('dlq discard by filter', () => {
  it("discards a run's 15 permanent dead letters in one call, each recording who, when and why", async () => {
    const fake = await setup.startFake({ entities: 60, seed: 99, profile: { invalidRecords: 15 } });
    fakeUrl = fake.url;
    await newSource('bulk-run');
    const run = await setup.runToEnd('bulk-run', 'full');
    const transient = await file('bulk-run', 2, { prefix: 't', errorClass: 'transient', reason: 'HTTP 503' });
    const before = Date.now();

    const counted = await bulkDiscard(api, 'bulk-run', {
      filter: { errorClass: 'permanent' },
      reason: 'invalid upstream, accepted',
      dryRun: true,
    });
    const res = await bulkDiscard(api, 'bulk-run', {
      filter: { errorClass: 'permanent' },
      reason: 'invalid upstream, accepted',
    });

    expect(counted).toMatchObject({ status: 200, json: { dryRun: true, matched: 15, discarded: 0 } });
    expect(res).toEqual({
      status: 200,
      json: { dryRun: false, matched: 15, discarded: 15, skipped: 0, nextCursor: null },
    });
    expect((await runView(engine.deps, (await engine.deps.runs.get(run.runId))!)).openDeadLetters).toBe(0);
    const open = JSON.parse((await cli('dlq', 'list', 'bulk-run', '--json')).stdout).items;
    expect(open.map((e: { entryId: string }) => e.entryId)).toEqual(transient);

    const listed = await cli('dlq', 'list', 'bulk-run', '--state', 'discarded', '--limit', '100');
    const json = JSON.parse(
      (await cli('dlq', 'list', 'bulk-run', '--state', 'discarded', '--limit', '100', '--json')).stdout,
    ).items;
    expect(json).toHaveLength(15);
    for (const entry of json) {
      expect(entry).toMatchObject({
        state: 'discarded',
        errorClass: 'permanent',
        runId: run.runId,
        discard: { by: ARN, reason: 'invalid upstream, accepted' },
      });
      expect(Date.parse(entry.discard.at)).toBeGreaterThanOrEqual(before - 1_000);
    }
    expect(listed.stdout).toMatch(/ENTRY\s+CLASS\s+DISCARDED\s+BY\s+WHY/);
    expect(listed.stdout).toContain(`${json[0].entryId}`);
    expect(listed.stdout).toMatch(
      new RegExp(`${json[0].discard.at}\\s+${ARN.replace(/[/.]/g, '\\$&')}\\s+invalid upstream, accepted`),
    );
  });

  it('the CLI counts first, says how many, and discards them with --yes', async () => {
    await newSource('bulk-cli');
    await file('bulk-cli', 6, { prefix: 'gone', errorClass: 'permanent', reason: 'HTTP 404 from /items/x' });
    const kept = await file('bulk-cli', 3, {
      prefix: 'bad',
      errorClass: 'permanent',
      reason: 'invalid record',
    });

    const refused = await cli(
      'dlq',
      'discard',
      'bulk-cli',
      '--reason-match',
      'HTTP 404',
      '--reason',
      'deleted',
    );
    const res = await cli(
      'dlq',
      'discard',
      'bulk-cli',
      '--reason-match',
      'HTTP 404',
      '--reason',
      'deleted upstream',
      '--yes',
    );

    expect(refused.code).toBe(2);
    expect(refused.stdout).toContain("6 open dead letters of bulk-cli match --reason-match 'HTTP 404'");
    expect(refused.stderr).toContain('refused without a terminal to ask; pass --yes');
    expect(res.code).toBe(0);
    expect(res.stdout).toContain("6 open dead letters of bulk-cli match --reason-match 'HTTP 404'");
    expect(res.stdout).toContain('discarded 6 dead letters of bulk-cli: deleted upstream');
    const open = JSON.parse((await cli('dlq', 'list', 'bulk-cli', '--json')).stdout).items;
    expect(open.map((e: { entryId: string }) => e.entryId)).toEqual(kept);
    const matching = JSON.parse(
      (await cli('dlq', 'list', 'bulk-cli', '--state', 'discarded', '--reason-match', '404', '--json'))
        .stdout,
    ).items;
    expect(matching).toHaveLength(6);
  });

  it('skips, and counts, an entry a retry resolved between the read and the conditional write', async () => {
    await newSource('bulk-race');
    const ids = await file('bulk-race', 5, {
      prefix: 'r',
      errorClass: 'permanent',
      reason: 'invalid record',
    });
    const store = engine.deps.deadLetters;
    // A retry resolves the first entry right after the call has read it, before its write.
    const racing: DeadLetterStore = Object.create(store, {
      list: {
        value: async (...args: Parameters<DeadLetterStore['list']>) => {
          const page = await store.list(...args);
          if (page.items[0]) await store.resolve('bulk-race', page.items[0].entryId);
          return page;
        },
      },
    });

    const counted = await bulkDiscard(api, 'bulk-race', { filter: { all: true }, reason: 'x', dryRun: true });
    const res = await bulkDiscard({ ...api, deadLetters: racing }, 'bulk-race', {
      filter: { all: true },
      reason: 'retired',
    });

    expect(counted.json.matched).toBe(5);
    expect(res.json).toMatchObject({ matched: 5, discarded: 4, skipped: 1, nextCursor: null });
    expect(await store.get('bulk-race', ids[0]!)).toBeUndefined();
    for (const id of ids.slice(1)) expect((await store.get('bulk-race', id))?.state).toBe('discarded');
  });

  it('the CLI reports as skipped an entry a retry resolved between its count and its discard', async () => {
    await newSource('bulk-between');
    const ids = await file('bulk-between', 15, {
      prefix: 'p',
      errorClass: 'permanent',
      reason: 'invalid record',
    });
    const store = engine.deps.deadLetters;
    let reads = 0;
    // The count reads once (15 fit one page); before the discard's read, a retry resolves one.
    const racing: DeadLetterStore = Object.create(store, {
      list: {
        value: async (...args: Parameters<DeadLetterStore['list']>) => {
          if (++reads === 2) await store.resolve('bulk-between', ids[7]!);
          return store.list(...args);
        },
      },
    });
    const racingServer = await startDevServer({ deps: { ...api, deadLetters: racing } });
    const io = captureIo();
    const args = [
      'dlq',
      'discard',
      'bulk-between',
      '--error-class',
      'permanent',
      '--reason',
      'accepted',
      '--yes',
    ];
    const code = await runCli(['node', 'harvester', '--endpoint', racingServer.url, ...args], io).finally(
      () => racingServer.stop(),
    );

    expect(code).toBe(0);
    expect(io.stdout()).toContain('15 open dead letters of bulk-between match --error-class permanent');
    expect(io.stdout()).toContain('discarded 14 dead letters of bulk-between: accepted');
    expect(io.stdout()).toContain(
      'skipped 1: discarded, resolved or failed again differently since they were counted',
    );
    expect(await store.get('bulk-between', ids[7]!)).toBeUndefined();
  });

  it('refuses an empty filter with 400 and discards nothing', async () => {
    await newSource('bulk-empty');
    await file('bulk-empty', 2, { prefix: 'e', errorClass: 'permanent', reason: 'invalid record' });

    const answers = await Promise.all(
      [
        { filter: {}, reason: 'x' },
        { reason: 'x' },
        { filter: { all: false }, reason: 'x' },
        { filter: { all: true, errorClass: 'permanent' }, reason: 'x' },
        { filter: { all: true } },
      ].map((body) => callApi(api, 'POST', '/sources/bulk-empty/dead-letters/discard', body)),
    );
    const cliEmpty = await cli('dlq', 'discard', 'bulk-empty', '--reason', 'x');

    for (const answer of answers) expect(answer.status).toBe(400);
    expect(JSON.stringify(answers[0]!.json)).toContain('name at least one of runId, errorClass, reasonMatch');
    expect(cliEmpty.code).toBe(2);
    expect(cliEmpty.stderr).toContain('or a filter: --run, --error-class, --reason-match or --all');
    const open = JSON.parse((await cli('dlq', 'list', 'bulk-empty', '--json')).stdout).items;
    expect(open).toHaveLength(2);
  });

  it('pages through more entries than one call does: a cursor the CLI follows', async () => {
    await newSource('bulk-many');
    const runId = ulid();
    const count = BULK_DISCARD_PER_CALL + 30;
    await file('bulk-many', count, { prefix: 'm', errorClass: 'transient', reason: 'HTTP 500', runId });
    await file('bulk-many', 4, { prefix: 'other', errorClass: 'transient', reason: 'HTTP 500' });

    const first = await bulkDiscard(api, 'bulk-many', {
      filter: { runId },
      reason: 'outage, re-run instead',
    });
    const borrowed = await bulkDiscard(api, 'bulk-many', {
      filter: { errorClass: 'transient' },
      reason: 'x',
      cursor: first.json.nextCursor,
    });
    const rest = await cli('dlq', 'discard', 'bulk-many', '--run', runId, '--reason', 'outage', '--yes');

    expect(first.json).toMatchObject({ matched: BULK_DISCARD_PER_CALL, discarded: BULK_DISCARD_PER_CALL });
    expect(first.json.nextCursor).toEqual(expect.any(String));
    expect(borrowed.status).toBe(400);
    expect(rest.code).toBe(0);
    expect(rest.stdout).toContain(`30 open dead letters of bulk-many match --run ${runId}`);
    expect(rest.stdout).toContain('discarded 30 dead letters of bulk-many: outage');
    const open = JSON.parse((await cli('dlq', 'list', 'bulk-many', '--json')).stdout).items;
    expect(open).toHaveLength(4);
  });
});

describe('dlq retry by filter', () => {
  it('retries only the open dead letters the filter matches, and the run shows its filter', async () => {
    await newSource('bulk-retry');
    const runId = ulid();
    const matching = await file('bulk-retry', 3, {
      prefix: 'a',
      errorClass: 'transient',
      reason: 'HTTP 503',
      runId,
    });
    const otherRun = await file('bulk-retry', 3, {
      prefix: 'b',
      errorClass: 'transient',
      reason: 'HTTP 503',
    });
    const otherClass = await file('bulk-retry', 2, {
      prefix: 'c',
      errorClass: 'permanent',
      reason: 'bad',
      runId,
    });
    const store = engine.deps.deadLetters;
    const untouched = [...otherRun, ...otherClass];
    const before = await Promise.all(untouched.map((id) => store.get('bulk-retry', id)));

    const started = await callApi(api, 'POST', '/sources/bulk-retry/dead-letters/retry', {
      filter: { runId, errorClass: 'transient' },
    });
    await waitForRun(engine.deps, started.json.runId);
    const shown = await callApi(api, 'GET', `/sources/bulk-retry/runs/${started.json.runId}`);

    expect(started.status).toBe(202);
    expect(shown.json.deadLetterFilter).toEqual({ runId, errorClass: 'transient' });
    // Retried: each entry was fetched again, and is resolved (gone at the source) or failed anew.
    for (const id of matching) {
      const entry = await store.get('bulk-retry', id);
      expect(entry === undefined || entry.runId === started.json.runId, id).toBe(true);
    }
    expect(await Promise.all(untouched.map((id) => store.get('bulk-retry', id)))).toEqual(before);
  });

  it('refuses an empty retry filter with 400', async () => {
    const empty = await callApi(api, 'POST', '/sources/bulk-retry/dead-letters/retry', { filter: {} });
    expect(empty.status).toBe(400);
  });
});
