import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { EXIT_CODES } from '../../lib/cli/exit-codes.js';
import { runCli } from '../../lib/cli/main.js';
import { captureIo } from '../support/cli-io.js';
import { type FakeApi, startFakeApi } from '../support/fake-api.js';

/**
 * Following a run from a script: `--watch --json` streams NDJSON (one document a line, each
 * change, then the end with its exit code), and `--fail-on-dead-letters` makes a run that
 * succeeded but filed dead letters exit 3, so CI can fail on it.
 */

const RUN_ID = '01J9ZQ4T7J8Y2K3M4N5P6Q7R8S';
const PATH = `/sources/acme/runs/${RUN_ID}`;

function view(state: string, processed: number, filed: number) {
  const ended = state !== 'running';
  return {
    runId: RUN_ID,
    sourceId: 'acme',
    mode: 'full',
    state,
    trigger: 'cli',
    progress: { processed, total: 10, totalIsEstimate: !ended, pages: 1 },
    errorCount: filed,
    openDeadLetters: filed,
    summary: `${processed}/10 processed, ${filed} dead letters filed`,
    verdict: 'first start',
    durationSeconds: 3,
    heartbeatAgeSeconds: ended ? null : 1,
    resume: { reason: 'first_start', at: '2026-12-07T00:00:00.000Z' },
    failure: null,
    epoch: 1,
    deferredUntil: null,
    ...(ended
      ? { outcome: { processed, failed: filed, deadLettersFiled: filed, sourceTotal: 10, fixed: true } }
      : {}),
  };
}

let api: FakeApi;
let filed = 0;
let polls = 0;

beforeAll(async () => {
  api = await startFakeApi({
    [`GET ${PATH}`]: () => {
      polls += 1;
      return polls < 3
        ? { status: 200, body: view('running', polls * 3, 0) }
        : { status: 200, body: view('succeeded', 10 - filed, filed) };
    },
  });
});
const savedInterval = process.env.HARVESTER_WATCH_INTERVAL_MS;
afterAll(() => {
  api.close();
  if (savedInterval === undefined) delete process.env.HARVESTER_WATCH_INTERVAL_MS;
  else process.env.HARVESTER_WATCH_INTERVAL_MS = savedInterval;
});
beforeEach(() => {
  polls = 0;
  filed = 0;
  process.exitCode = undefined;
  process.env.HARVESTER_WATCH_INTERVAL_MS = '5';
});

async function watch(...args: string[]) {
  const io = captureIo();
  const code = await runCli(['node', 'harvester', '--endpoint', api.url, ...args], io);
  const exit = code === EXIT_CODES.ok ? (process.exitCode ?? 0) : code;
  process.exitCode = undefined;
  return { io, exit };
}

describe('following a run from a script', () => {
  it('--json --watch prints one JSON document a line: each change, then the end with its exit code', async () => {
    const { io, exit } = await watch('--json', 'runs', 'watch', 'acme', RUN_ID);

    expect(exit).toBe(0);
    const lines = io.stdout().trim().split('\n');
    const docs = lines.map(
      (line) => JSON.parse(line) as { type: string; ok?: boolean; run: { state: string } },
    );
    expect(docs.map((d) => d.type)).toEqual(['run', 'run', 'run', 'ended']);
    expect(docs.at(-1)).toMatchObject({ type: 'ended', ok: true, exitCode: 0, run: { state: 'succeeded' } });
  });

  it('--fail-on-dead-letters exits 3 when the run succeeded but filed dead letters, and says where they are', async () => {
    filed = 2;
    const { io, exit } = await watch('runs', 'watch', 'acme', RUN_ID, '--fail-on-dead-letters');

    expect(exit).toBe(EXIT_CODES.deadLetters);
    expect(io.stdout()).toContain('2 dead letters filed (--fail-on-dead-letters)');
    expect(io.stdout()).toContain(`dlq list acme --run ${RUN_ID}`);
  });

  it('--fail-on-dead-letters exits 0 for a clean run, and without it dead letters exit 0 too', async () => {
    expect((await watch('runs', 'watch', 'acme', RUN_ID, '--fail-on-dead-letters')).exit).toBe(0);
    filed = 2;
    expect((await watch('runs', 'watch', 'acme', RUN_ID)).exit).toBe(0);
  });

  it('--json with --fail-on-dead-letters ends its stream with exit code 3', async () => {
    filed = 1;
    const { io, exit } = await watch('--json', 'runs', 'watch', 'acme', RUN_ID, '--fail-on-dead-letters');
    expect(exit).toBe(EXIT_CODES.deadLetters);
    const last = JSON.parse(io.stdout().trim().split('\n').at(-1)!) as { ok: boolean; exitCode: number };
    expect(last).toMatchObject({ ok: false, exitCode: 3 });
  });

  it('runs start --fail-on-dead-letters without --watch is a usage mistake', async () => {
    const { exit, io } = await watch('runs', 'start', 'acme', '--mode', 'full', '--fail-on-dead-letters');
    expect(exit).toBe(EXIT_CODES.usage);
    expect(io.stderr()).toContain('--fail-on-dead-letters needs --watch');
    expect(api.seen.some((r) => r.method === 'POST')).toBe(false);
  });
});
