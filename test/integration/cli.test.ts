import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type FakeSource, startFakeSource } from '../../lib/local/fake-source/index.js';
import { type LocalStack, startLocalStack } from '../../lib/local/local-stack.js';

/**
 * The `harvester` binary as a user runs it, against a local stack (on the test emulator) and a
 * fake source with a few broken records.
 */

const BIN = fileURLToPath(new URL('../../bin/harvester.mjs', import.meta.url));
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

beforeAll(async () => {
  process.env.AWS_ENDPOINT_URL = inject('awsEndpoint');
  [stack, fake, dir] = await Promise.all([
    startLocalStack({ prefix: `t-cli-${randomBytes(3).toString('hex')}`, logLevel: 'SILENT' }),
    startFakeSource({ entities: ENTITIES, seed: 11, profile: { invalidRecords: BROKEN }, latencyMs: 0 }),
    mkdtemp(join(tmpdir(), 'harvester-cli-')),
  ]);
});

afterAll(async () => {
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
    expect(res.stdout).toMatch(/running .*processed · \d+ in DLQ · heartbeat \d+s · resume fresh_start/);
    expect(res.stdout).toContain(
      `run ${runId} succeeded: ${ENTITIES - BROKEN}/${ENTITIES} processed, ${BROKEN} in DLQ`,
    );
  });

  it('runs get --json prints the run as parseable JSON', async () => {
    const res = await cli('runs', 'get', runId, '--json');
    expect(res.code).toBe(0);
    const run = JSON.parse(res.stdout);
    expect(run).toMatchObject({
      runId,
      state: 'succeeded',
      errorCount: BROKEN,
      progress: { total: ENTITIES },
    });
  });

  it('dlq list --json prints the dead letters as parseable JSON', async () => {
    const res = await cli('dlq', 'list', 'cli-src', '--run', runId, '--json');
    expect(res.code).toBe(0);
    const page = JSON.parse(res.stdout);
    expect(page.items).toHaveLength(BROKEN);
    expect(page.items[0]).toMatchObject({ sourceId: 'cli-src', kind: 'item', runId });
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

  it('runs watch exits non-zero for a cancelled run', async () => {
    const started = JSON.parse((await cli('runs', 'start', 'cli-src', '--mode', 'full', '--json')).stdout);
    const busy = await cli('runs', 'start', 'cli-src', '--mode', 'full');
    expect(busy.code).toBe(1);
    expect(busy.stderr).toContain(`active run: ${started.runId}`);
    expect((await cli('runs', 'cancel', started.runId)).code).toBe(0);
    const watched = await cli('runs', 'watch', started.runId);
    expect(watched.code).toBe(1);
    expect(watched.stdout).toContain(`run ${started.runId} cancelled`);
  });
});
