import { execFile, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_VERSION } from '../../lib/api/version.js';
import { type LocalStack, startLocalStack } from '../../lib/local/local-stack.js';
import { type FakeSource, startFakeSource } from '../../tools/fake-source/index.js';
import { testEndpoint } from '../support/aws.js';
import { startSlowHost } from '../support/listener.js';

/**
 * The `harvester` binary as a user runs it, against a local stack (on the test emulator) and a
 * fake source with a few broken records.
 */

const BIN = fileURLToPath(new URL('../../bin/harvester.mjs', import.meta.url));
const BUILD = fileURLToPath(new URL('../../scripts/build-cli.mjs', import.meta.url));
const BUNDLE = fileURLToPath(new URL('../../dist/cli/main.mjs', import.meta.url));

function bundleIsFresh(): boolean {
  if (!existsSync(BUNDLE)) return false;
  const newest = readdirSync(fileURLToPath(new URL('../../lib', import.meta.url)), {
    recursive: true,
    withFileTypes: true,
  })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => statSync(join(e.parentPath, e.name)).mtimeMs);
  return statSync(BUNDLE).mtimeMs >= Math.max(...newest);
}
const BROKEN = 4;
const ENTITIES = 250;
let stack: LocalStack;
let fake: FakeSource;
let dir: string;

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

function cli(...args: string[]): Promise<Result> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      {
        env: { ...process.env, HARVESTER_API_URL: stack.apiUrl, HARVESTER_WATCH_INTERVAL_MS: '250' },
        timeout: 45_000,
      },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

let savedEndpoint: string | undefined;

beforeAll(async () => {
  // The binary runs the prebuilt bundle when it is fresh (npm ci builds it); after an edit it
  // would fall back to TypeScript, so rebuild first: the start-up measured below is the bundle's.
  if (!bundleIsFresh()) execFileSync(process.execPath, [BUILD], { stdio: 'ignore' });
  savedEndpoint = process.env.AWS_ENDPOINT_URL;
  process.env.AWS_ENDPOINT_URL = testEndpoint();
  [stack, fake, dir] = await Promise.all([
    startLocalStack({ prefix: `t-cli-${randomBytes(3).toString('hex')}`, logLevel: 'SILENT' }),
    startFakeSource({ entities: ENTITIES, seed: 11, profile: { invalidRecords: BROKEN }, latencyMs: 0 }),
    mkdtemp(join(tmpdir(), 'harvester-cli-')),
  ]);
});

afterAll(async () => {
  if (savedEndpoint === undefined) delete process.env.AWS_ENDPOINT_URL;
  else process.env.AWS_ENDPOINT_URL = savedEndpoint;
  await Promise.all([
    stack?.stop(),
    fake?.stop(),
    dir ? rm(dir, { recursive: true, force: true }) : undefined,
  ]);
});

describe('harvester CLI', () => {
  let runId: string;

  it('sources put creates a source from a config file, with a schedule', async () => {
    const config = {
      url: `${fake.url}/records`,
      itemsPath: 'data',
      idField: 'id',
      updatedAtField: 'updatedAt',
      totalPath: 'total',
      pageSize: 60,
      pagination: { type: 'cursor', cursorParam: 'cursor', nextCursorPath: 'next_cursor' },
    };
    const file = join(dir, 'config.json');
    await writeFile(file, JSON.stringify(config));
    const res = await cli(
      'sources',
      'put',
      'cli-src',
      '--connector',
      'rest-json',
      '--config',
      `@${file}`,
      '--schedule',
      'rate(1 hour):incremental',
    );
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    expect(res.stdout).toContain('created source cli-src');
    expect(res.stdout).toContain('rate(1 hour) → incremental');
  });

  it('runs start --watch follows the run to success, printing its progress', async () => {
    const res = await cli('runs', 'start', 'cli-src', '--mode', 'full', '--watch');
    expect(res.code).toBe(0);
    runId = /started run (\S+)/.exec(res.stdout)?.[1] ?? '';
    expect(runId).toMatch(/^[0-9A-Z]{26}$/);
    // Plain words, not jargon: no "resume fresh_start".
    expect(res.stdout).toMatch(
      /running .*processed, \d+ in DLQ · last heartbeat \d+s ago · started from the first page/,
    );
    expect(res.stdout).not.toContain('fresh_start');
    // A finished run reports its outcome — of the source's own total — and how long it took.
    expect(res.stdout).toMatch(
      new RegExp(
        `run ${runId} succeeded in \\d+s: ${ENTITIES - BROKEN}/${ENTITIES} processed, ${BROKEN} dead letters filed \\(live: ${BROKEN} still open\\)`,
      ),
    );
  });

  it('runs get shows who started the run, its duration and no heartbeat once it ended', async () => {
    const res = await cli('runs', 'get', 'cli-src', runId);
    expect(res.code).toBe(0);
    expect(res.stdout).toContain('started by cli');
    expect(res.stdout).toMatch(/duration\s+\d+s\n/);
    expect(res.stdout).not.toContain('heartbeat');
  });

  it('runs get --json prints the run as parseable JSON', async () => {
    const res = await cli('runs', 'get', 'cli-src', runId, '--json');
    expect(res.code).toBe(0);
    const run = JSON.parse(res.stdout);
    expect(run).toMatchObject({
      runId,
      state: 'succeeded',
      trigger: 'cli',
      errorCount: BROKEN,
      openDeadLetters: BROKEN,
      outcome: {
        processed: ENTITIES - BROKEN,
        failed: BROKEN,
        deadLettersFiled: BROKEN,
        sourceTotal: ENTITIES,
        fixed: true,
      },
      progress: { total: ENTITIES, totalIsEstimate: false },
      heartbeatAgeSeconds: null,
    });
  });

  it('dlq list --json prints the dead letters as parseable JSON', async () => {
    const res = await cli('dlq', 'list', 'cli-src', '--run', runId, '--json');
    expect(res.code).toBe(0);
    const page = JSON.parse(res.stdout);
    expect(page.items).toHaveLength(BROKEN);
    expect(page.items[0]).toMatchObject({ sourceId: 'cli-src', kind: 'item', runId });
  });

  it('items list prints a table of stored entities, --json the API page with its cursors; items get and explain tell their story', async () => {
    const table = await cli('items', 'list', 'cli-src', '--limit', '3');
    const listed = await cli('items', 'list', 'cli-src', '--limit', '3', '--json');
    const page = JSON.parse(listed.stdout);
    const entities = page.items;
    const next = JSON.parse(
      (await cli('items', 'list', 'cli-src', '--limit', '3', '--cursor', page.nextCursor, '--json')).stdout,
    );
    const selected = JSON.parse(
      (await cli('items', 'list', 'cli-src', '--limit', '3', '--json=entityId,version')).stdout,
    );
    const misspelt = await cli('items', 'list', 'cli-src', '--limit', '3', '--json=entityid');
    const entityId = entities[0].entityId as string;
    const got = await cli('items', 'get', 'cli-src', entityId);
    const broken = JSON.parse((await cli('dlq', 'list', 'cli-src', '--run', runId, '--json')).stdout).items[0]
      .ref;
    const story = await cli('items', 'explain', 'cli-src', broken);

    expect(table.code).toBe(0);
    expect(table.stdout.split('\n')[0]).toMatch(/^ENTITY\s+VERSION\s+CHANGED\s+STATE\s+STORED BY RUN\s+DATA/);
    expect(table.stdout).toContain('more: harvester');
    expect(entities).toHaveLength(3);
    expect(page.nextCursor).toEqual(expect.any(String));
    // `--json=a,b`: those fields of each item, the envelope and its cursors whole.
    expect(selected.items).toEqual(
      entities.map((e: { entityId: string; version: string }) => ({
        entityId: e.entityId,
        version: e.version,
      })),
    );
    expect(selected.nextCursor).toEqual(expect.any(String));
    expect(misspelt.code).toBe(2);
    expect(misspelt.stderr).toContain('unknown JSON field `entityid`; the answer has:');
    expect(next.items[0].entityId > entities[2].entityId).toBe(true);
    expect(entities[0].provenance.runId).toBe(runId);
    expect(got.stdout).toContain(`stored     `);
    expect(got.stdout).toContain(`by full run ${runId}`);
    expect(story.code).toBe(0);
    expect(story.stdout).toMatch(new RegExp(`^${broken}: dead_lettered`));
    expect(story.stdout).toContain('invalid record');
  });

  it('prints a problem as "error: <title>: <detail>" with its fields, and exits 1', async () => {
    const res = await cli(
      'sources',
      'put',
      'cli-bad',
      '--connector',
      'rest-json',
      '--config',
      '{"url":"ftp://x"}',
    );
    expect(res.code).toBe(1);
    expect(res.stdout).toBe('');
    expect(res.stderr).toMatch(/^error: Invalid connector config: /);
    expect(res.stderr).toContain('  config.url: must be an http(s) URL');
  });

  it('with --json, a problem is problem+json on stderr, nothing on stdout, exit 1 (2 for a usage mistake)', async () => {
    const res = await cli('runs', 'get', 'cli-src', '01J9ZQ4T7J8Y2K3M4N5P6Q7R8S', '--json');
    expect(res.code).toBe(1);
    expect(res.stdout).toBe('');
    expect(JSON.parse(res.stderr)).toMatchObject({ status: 404, title: 'Run not found' });
    const usage = await cli('runs', 'start', 'cli-src', '--json');
    expect(usage.code).toBe(2);
    expect(JSON.parse(usage.stderr)).toMatchObject({
      title: 'Invalid command line',
      detail: expect.stringContaining('--mode'),
    });
    const unreachable = await cli('--endpoint', 'http://127.0.0.1:9', 'sources', 'list', '--json');
    expect(unreachable.code).toBe(1);
    expect(JSON.parse(unreachable.stderr)).toMatchObject({ title: 'API unreachable' });
  });

  it('--version prints the package version and the admin API version it speaks', async () => {
    const res = await cli('--version');
    expect(res.code).toBe(0);
    const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
    expect(res.stdout.trim()).toBe(`${version} (admin API ${API_VERSION})`);
  });

  it('runs events tells the run’s story in words; --json prints the whole envelope', async () => {
    const res = await cli('runs', 'events', 'cli-src', runId);
    expect(res.code).toBe(0);
    expect(res.stdout.split('\n')[0]).toMatch(/^SEQ\s+AT\s+EPOCH\s+EVENT\s+WHAT/);
    expect(res.stdout).toMatch(/1\s+\S+\s+1\s+started\s+full run started \(cli; fresh_start\)/);
    expect(res.stdout).toContain(
      `succeeded: ${ENTITIES - BROKEN}/${ENTITIES} processed, ${BROKEN} dead letters filed`,
    );
    const json = JSON.parse((await cli('runs', 'events', 'cli-src', runId, '--json')).stdout);
    expect(json).toMatchObject({ nextCursor: null, dropped: 0 });
    expect(json.items.at(-1)).toMatchObject({ type: 'ended', detail: { state: 'succeeded' } });
  });

  it('--schedule without a mode is refused, naming the fix', async () => {
    const res = await cli(
      'sources',
      'put',
      'cli-nomode',
      '--connector',
      'rest-json',
      '--config',
      '{}',
      '--schedule',
      'rate(1 hour)',
    );
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('needs a mode after the expression, e.g. "rate(1 hour):incremental"');
  });

  it('sources schedule replaces the schedules alone', async () => {
    const before = JSON.parse((await cli('sources', 'get', 'cli-src', '--json')).stdout);
    const res = await cli('sources', 'schedule', 'cli-src', '--schedule', 'cron(0 3 * * ? *):full', '--json');
    expect(res.code).toBe(0);
    const after = JSON.parse(res.stdout);
    expect(after.schedules).toMatchObject([{ expression: 'cron(0 3 * * ? *)', mode: 'full' }]);
    expect(after.configHash).toBe(before.configHash);
    expect(after.config).toEqual(before.config);
  });

  it("secrets bind binds a source's secrets to origins, secrets show shows them, and bind's help has an example", async () => {
    const bound = await cli(
      'secrets',
      'bind',
      'cli-bound',
      '--secret',
      `ssm:/harvester/cli-bound/token=${fake.url},https://api.example.com`,
    );
    const shown = await cli('secrets', 'show', 'cli-bound', '--json');
    const help = await cli('secrets', 'bind', '--help');

    expect(bound.stderr).toBe('');
    expect(bound.stdout).toContain(`ssm:/harvester/cli-bound/token → ${fake.url}, https://api.example.com`);
    expect(JSON.parse(shown.stdout).bindings).toEqual({
      'ssm:/harvester/cli-bound/token': [fake.url, 'https://api.example.com'],
    });
    expect(help.stdout).toMatch(/Example:\n\s+\$ harvester secrets bind acme/);
  });

  it('secrets bind refuses a --secret without origins, naming the form it wants', async () => {
    const res = await cli('secrets', 'bind', 'cli-bound', '--secret', 'ssm:/harvester/cli-bound/token');
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('must be <reference>=<origin>');
  });

  it('sources test fetches one page and shows a sample entity', async () => {
    const res = await cli('sources', 'test', 'cli-src');
    expect(res.code).toBe(0);
    expect(res.stdout).toContain(`ok: ${fake.url}/records answered 200`);
    expect(res.stdout).toMatch(/first page 60 records of 250, more pages follow/);
    expect(res.stdout).toMatch(/sample\s+e-\d+/);
  });

  it('runs list --state lists across sources', async () => {
    const res = await cli('runs', 'list', '--state', 'succeeded', '--limit', '100');
    expect(res.code).toBe(0);
    expect(res.stdout).toContain(runId);
    expect(res.stdout).toContain('cli-src');
  });

  it('dlq retry --watch that fixes nothing says so and exits 1; the hint it prints works when pasted', async () => {
    const res = await cli('dlq', 'retry', 'cli-src', '--watch');
    expect(res.code).toBe(1);
    expect(res.stdout).toMatch(
      new RegExp(
        `failed in \\d+s: fixed nothing: ${BROKEN} failed again \\(live: ${BROKEN} still open\\) \\(retry_fixed_nothing: `,
      ),
    );
    expect(res.stdout).toContain('see why: harvester');

    const started = await cli('dlq', 'retry', 'cli-src');
    const hint = /follow it: (.*)$/m.exec(started.stdout)?.[1] ?? '';
    expect(hint).toMatch(
      new RegExp(`^harvester --endpoint ${stack.apiUrl} runs watch cli-src [0-9A-Z]{26}$`),
    );
    const [, ...args] = hint.split(' ');
    const pasted = await cli(...args);
    expect(pasted.stdout).toContain('fixed nothing');
  });

  it('runs list still shows the first run with the dead letters it filed, their live state beside', async () => {
    const res = await cli('runs', 'list', 'cli-src', '--limit', '100');
    expect(res.code).toBe(0);
    const line = res.stdout.split('\n').find((l) => l.startsWith(runId)) ?? '';
    expect(line).toContain(
      `${ENTITIES - BROKEN}/${ENTITIES} processed, ${BROKEN} dead letters filed (live: 0 still open as this run's; ${BROKEN} since failed again in a later run, resolved or discarded)`,
    );
    // The retries fixed nothing: the source's last success is still the full run.
    const source = await cli('sources', 'get', 'cli-src');
    expect(source.stdout).toMatch(
      new RegExp(
        `last ok    ${runId} succeeded \\(full\\) \\S+: ${ENTITIES - BROKEN}/${ENTITIES} processed, ${BROKEN} dead letters filed`,
      ),
    );
    expect(source.stdout).toMatch(/last run {3}\S+ failed \(dlq_retry\) /);
    expect(source.stdout.match(/^last ok /gm)).toHaveLength(1);
  });

  it('measures start-up: --help and runs get (reported in the README)', async () => {
    const time = async (...args: string[]) => {
      const samples: number[] = [];
      for (let i = 0; i < 5; i++) {
        const started = performance.now();
        await cli(...args);
        samples.push(performance.now() - started);
      }
      return Math.round(samples.sort((a, b) => a - b)[2]!);
    };
    const help = await time('--help');
    const get = await time('runs', 'get', 'cli-src', runId);
    console.info(`harvester start-up, median of 5: --help ${help} ms, runs get ${get} ms`);
    expect(help).toBeGreaterThan(0);
  });

  it('fake-source --api-url prints ready rest-json and GitHub configs for that API that work when pasted', async () => {
    // The environment names another API: --api-url wins, as when `local` listens elsewhere.
    const child = spawn(
      process.execPath,
      [BIN, 'fake-source', '--port', '0', '--entities', '20', '--api-url', stack.apiUrl],
      { env: { ...process.env, HARVESTER_API_URL: 'http://127.0.0.1:1' } },
    );
    let out = '';
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ready line: ${out}`)), 30_000);
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes('Ctrl-C')) {
          clearTimeout(timer);
          resolve();
        }
      });
    });
    try {
      const lines = out.split('\n').filter((l) => l.trim().startsWith('harvester'));
      expect(lines).toHaveLength(2);
      expect(lines[1]).toContain('--connector github-issues');
      for (const line of lines)
        expect(line.trim()).toMatch(`harvester --endpoint ${stack.apiUrl} sources put`);
      // Paste the GitHub line (minus `harvester`, which the test runs directly).
      const github = lines[1]!.trim().replace(/^harvester /, '');
      const args = [...github.matchAll(/'[^']*'|\S+/g)].map((m) => m[0].replace(/^'|'$/g, ''));
      const put = await cli(...args);
      expect(put.code).toBe(0);
      const tested = await cli('sources', 'test', 'demo-github');
      expect(tested.code).toBe(0);
      expect(tested.stdout).toMatch(/first page 20 records/);
    } finally {
      child.kill('SIGINT');
    }
  });

  it('runs watch exits non-zero for a cancelled run', async () => {
    // A source that never answers in time, so the run is still going when it is cancelled.
    const slow = await startSlowHost(60_000);
    try {
      const file = join(dir, 'slow.json');
      await writeFile(
        file,
        JSON.stringify({
          url: `${slow.url}/records`,
          idField: 'id',
          updatedAtField: 'updatedAt',
          pagination: { type: 'page' },
        }),
      );
      expect(
        (await cli('sources', 'put', 'cli-slow', '--connector', 'rest-json', '--config', `@${file}`)).code,
      ).toBe(0);
      const started = JSON.parse((await cli('runs', 'start', 'cli-slow', '--mode', 'full', '--json')).stdout);
      const busy = await cli('runs', 'start', 'cli-slow', '--mode', 'full');
      expect(busy.code).toBe(1);
      expect(busy.stderr).toContain(`active run: ${started.runId}; follow it: harvester`);
      expect(busy.stderr).toContain(`runs watch cli-slow ${started.runId}`);
      expect((await cli('runs', 'cancel', 'cli-slow', started.runId)).code).toBe(0);
      const watched = await cli('runs', 'watch', 'cli-slow', started.runId);
      expect(watched.code).toBe(1);
      expect(watched.stdout).toContain(`run ${started.runId} cancelled`);
    } finally {
      await slow.stop();
    }
  });
});
