import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ApiDeps } from '../../lib/api/deps.js';
import type { RunView } from '../../lib/api/schemas/runs.js';
import { runLines } from '../../lib/cli/output.js';
import { RELIABILITY } from '../../lib/config/constants.js';
import type { Connector } from '../../lib/connectors/contract.js';
import { githubIssuesConnector } from '../../lib/connectors/github-issues/index.js';
import type { ConnectorLookup } from '../../lib/engine/index.js';
import { processPage, startRun } from '../../lib/engine/index.js';
import type { RunMode, SyncRun } from '../../lib/run/model.js';
import { partitionsOf } from '../../lib/run/partitions.js';
import { apiOver, callApi } from '../support/api.js';
import { CrashHooks, movableClock } from '../support/crash.js';
import { putSource, useEngineWithFakes, waitForRun } from '../support/harness.js';
import { compareWithTruth } from '../support/live.js';
import { type MemorySource, memorySource, withMemoryKeyed } from '../support/memory-keyed.js';
import { sourceOfShape } from '../support/shapes.js';

/** github-issues with the windows a test chooses (the real keyset reads each window). */
let chosenBoundaries: string[] = [];
const githubChosenWindows: Connector<unknown> = {
  ...(githubIssuesConnector as Connector<unknown>),
  manifest: { ...githubIssuesConnector.manifest, name: 'github-chosen-windows' },
  manifestFor: () => ({ ...githubIssuesConnector.manifest, name: 'github-chosen-windows' }),
  planWindows: async () => ({ boundaries: chosenBoundaries, total: null, requests: 0 }),
};
const connectors: ConnectorLookup = {
  get: (name) => (name === 'github-chosen-windows' ? githubChosenWindows : withMemoryKeyed.get(name)),
};

/**
 * Partitioned runs end to end: a run over a keyed stream split into windows, each its own page
 * chain, against the emulator, with an in-memory keyed source whose windows and faults the test
 * controls.
 */

const SILENCE = RELIABILITY.silenceThresholdMs + 1_000;
const clock = movableClock();
const hooks = new CrashHooks();
let counter = 0;

// The reaper is ticked by hand (runtime.reapNow), after the clock has been moved past the silence threshold.
const { engine, runtime, startFake } = useEngineWithFakes('partitions', {
  workers: 3,
  clock,
  hooks,
  connectors,
  env: { MAX_PARTITIONS_PER_RUN: '4', MIN_ENTITIES_PER_PARTITION: '50' },
});
beforeAll(() => {
  engine.aws.clients.sqs.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as { MessageBody?: string; Entries?: { MessageBody?: string }[] };
      const bodies = input.Entries?.map((e) => e.MessageBody) ?? [input.MessageBody];
      sends.push({ command: String(context.commandName), bodies: bodies.filter((b) => b !== undefined) });
      return next(args);
    },
    { step: 'initialize', name: 'partitionsSendLog' },
  );
});
/** Every SQS request of the engine with the page message bodies it carried. */
const sends: { command: string; bodies: string[] }[] = [];
afterEach(() => hooks.disarm());

async function newSource(
  count: number,
  config: Record<string, unknown> = {},
): Promise<{ sourceId: string; source: MemorySource }> {
  const sourceId = `part-${++counter}`;
  const source = memorySource(sourceId, count);
  // Pages of 20: four windows of 75 still take several pages each, at half the page steps of 10.
  await putSource(engine.deps, sourceId, 'memory-keyed', { key: sourceId, pageSize: 20, ...config });
  return { sourceId, source };
}

async function run(sourceId: string, mode: RunMode = 'full', partitions?: number): Promise<SyncRun> {
  const started = await startRun(engine.deps, {
    sourceId,
    mode,
    ...(partitions !== undefined ? { partitions } : {}),
  });
  return waitForRun(engine.deps, started.runId, undefined, 60_000);
}

/** The store holds every entity of the source at its latest version, and nothing else. */
async function expectStoreMatches(sourceId: string, source: MemorySource): Promise<void> {
  const items = await engine.deps.items.listAll(sourceId);
  const stored = new Map(items.map((i) => [i.entityId, i.version]));
  const truth = source.truth();
  expect(items).toHaveLength(truth.length);
  for (const entity of truth) expect(stored.get(entity.id)).toBe(entity.updatedAt);
}

describe('a partitioned full run', () => {
  it('splits the stream into windows and delivers every entity exactly once, N/M exact', async () => {
    const { sourceId, source } = await newSource(300);
    sends.length = 0;

    const done = await run(sourceId);

    expect(done.state).toBe('succeeded');
    const partitions = partitionsOf(done);
    expect(partitions).toHaveLength(4);
    // The plan hands the four first pages to SQS in one SendMessageBatch call.
    const firstPages = (body: string) =>
      body.includes(`"runId":"${done.runId}"`) && /"page":1[,}]/.test(body) && body.includes('"partition":');
    const carrying = sends.filter((s) => s.bodies.some(firstPages));
    expect(carrying.map((s) => s.command)).toEqual(['SendMessageBatchCommand']);
    expect(carrying[0]!.bodies.filter(firstPages)).toHaveLength(4);
    expect(partitions.map((p) => p.state)).toEqual(['done', 'done', 'done', 'done']);
    // Contiguous windows, the first from the start, the last open.
    expect(partitions[0]!.window.from).toBeNull();
    expect(partitions.at(-1)!.window.until).toBeNull();
    for (let i = 1; i < partitions.length; i++)
      expect(partitions[i]!.window.from).toBe(partitions[i - 1]!.window.until);
    expect(done.progress).toMatchObject({ processed: 300, total: 300 });
    expect(partitions.reduce((sum, p) => sum + p.processed, 0)).toBe(300);
    expect(partitions.every((p) => p.processed > 0)).toBe(true);
    // Each entity fetched once — but the one the open window read last, when it read its tail
    // after finishing before the others (listed again at the tail's start, and not counted again).
    expect([...source.served.values()].filter((n) => n > 1).length).toBeLessThanOrEqual(1);
    expect(source.served.size).toBe(300);
    await expectStoreMatches(sourceId, source);
    // Every window was read as its own stream: page 1 of each asked with its window (the open
    // one's window starts later if it read a tail pass).
    const firstWindows = source.requests.filter((r) => r.cursor === null).map((r) => r.window);
    for (const p of partitions.slice(0, 3)) expect(firstWindows).toContainEqual(p.window);
    expect(firstWindows.filter((w) => w?.until === null).length).toBeGreaterThanOrEqual(1);
    // The watermark moved with the success, to the latest version read.
    const latest = source.truth().at(-1)!.updatedAt;
    expect((await engine.deps.sources.require(sourceId)).watermark).toBe(latest);
  }, 60_000);

  it('reads entities edited during the run: the open last window reads the tail once the others are done', async () => {
    const { sourceId, source } = await newSource(300);
    const truth = source.truth();
    const ids = truth.map((e) => e.id);
    // The open window is small and the bounded ones are slow: it reaches the end of the stream
    // long before them. While they read, entities of the first window (read already, or not yet)
    // are edited, which moves them past the end the open window reached.
    source.fixedPlan = [truth[100]!.updatedAt, truth[200]!.updatedAt, truth[295]!.updatedAt];
    let edits = 0;
    source.beforePage = async (window) => {
      if (window?.until === null) return;
      await new Promise((resolve) => setTimeout(resolve, 250));
      if (edits < 15) source.touch(ids[(edits++ * 7) % 75]!);
    };

    const raced = await run(sourceId);
    source.beforePage = undefined;

    expect(raced.state).toBe('succeeded');
    expect(edits).toBe(15);
    // Every edit made while the run read is in the store, without another run.
    await expectStoreMatches(sourceId, source);
    expect(raced.progress.processed).toBeGreaterThanOrEqual(300);
    expect((await engine.deps.sources.require(sourceId)).watermark).toBe(source.truth().at(-1)!.updatedAt);
  }, 60_000);

  it('a broken record after the open window’s last valid one is dead-lettered once, though its tail lists it again', async () => {
    const { sourceId, source } = await newSource(300);
    const truth = source.truth();
    source.invalid.add(truth.at(-1)!.id);
    source.fixedPlan = [truth[100]!.updatedAt, truth[200]!.updatedAt, truth[295]!.updatedAt];
    // The bounded windows are slow: the open one ends first, goes idle, and reads its tail last.
    source.beforePage = async (window) => {
      if (window?.until !== null) await new Promise((resolve) => setTimeout(resolve, 100));
    };

    const done = await run(sourceId);
    source.beforePage = undefined;

    expect(done.state).toBe('succeeded');
    expect(partitionsOf(done).at(-1)!.tailFrom).not.toBeNull();
    expect(source.served.get(truth.at(-1)!.id)).toBe(2);
    expect(done.progress.processed).toBe(299);
    expect(done.errorCount).toBe(1);
    expect(await engine.deps.deadLetters.listAll(sourceId)).toHaveLength(1);
  }, 60_000);

  it('a run not worth splitting stays one stream', async () => {
    const small = await newSource(60);
    const bounded = await newSource(300);

    const single = await run(small.sourceId);
    const unsplit = await run(bounded.sourceId, 'full', 1);

    expect(single.state).toBe('succeeded');
    expect(single.partitions).toBeUndefined();
    expect(single.progress.processed).toBe(60);
    expect(small.source.planCalls).toBe(1);
    // Bound 1: the connector is not even asked.
    expect(unsplit.partitions).toBeUndefined();
    expect(unsplit.progress.processed).toBe(300);
    expect(bounded.source.planCalls).toBe(0);
  }, 60_000);

  it('an incremental run with a watermark is not split; a first incremental run is', async () => {
    const { sourceId, source } = await newSource(300);

    const first = await run(sourceId, 'incremental');
    source.touch(source.truth()[0]!.id);
    const second = await run(sourceId, 'incremental');

    expect(partitionsOf(first)).toHaveLength(4);
    expect(second.partitions).toBeUndefined();
    expect(second.state).toBe('succeeded');
    await expectStoreMatches(sourceId, source);
  }, 60_000);
});

describe('failures of a partitioned run', () => {
  it('a crashed partition worker fences the run and every unfinished partition resumes from its checkpoint', async () => {
    // Pages of 10: the crash at page 3 of a window must leave pages of it still to read.
    const { sourceId, source } = await newSource(300, { pageSize: 10 });
    hooks.arm({ point: 'afterLoad', page: 3, partition: 1 });
    const crashed = hooks.nextCrash();
    const started = await startRun(engine.deps, { sourceId, mode: 'full' });
    await crashed;
    // The other partitions read their windows to the end meanwhile.
    await waitForRun(engine.deps, started.runId, (r) =>
      partitionsOf(r).every((p) => p.index === 1 || p.state !== 'running'),
    );

    clock.advance(SILENCE);
    const report = await runtime.reapNow();
    const done = await waitForRun(engine.deps, started.runId);

    expect(report.actions).toContainEqual({ runId: started.runId, verdict: 'resumed', action: 'resume' });
    expect(done).toMatchObject({ state: 'succeeded', epoch: 2, restarts: 1 });
    expect(done.resume).toMatchObject({ reason: 'resumed', from: 'checkpoint' });
    expect(done.progress.processed).toBe(300);
    await expectStoreMatches(sourceId, source);
    // Only the crashed page was fetched twice (partition 1 continued from its checkpoint), and the
    // entity the open window read last, listed again when it read its tail after partition 1.
    const twice = [...source.served.entries()].filter(([, n]) => n > 1);
    expect(twice).toHaveLength(11);
  }, 60_000);

  it('a partition that cannot fetch a page fails the run with its checkpoints; the watermark stays', async () => {
    const { sourceId, source } = await newSource(300, { pageSize: 10 });
    let failingFrom: string | null = null;
    source.failWhen = (position, window) =>
      window?.from != null && window.from === failingFrom && position.id === null ? 'page gone' : undefined;
    // Fail the third window's first page: decided once the plan is known.
    source.fixedPlan = null;
    const truth = source.truth();
    failingFrom = truth[150]!.updatedAt;
    source.fixedPlan = [truth[75]!.updatedAt, truth[150]!.updatedAt, truth[225]!.updatedAt];

    const failed = await run(sourceId);

    expect(failed.state).toBe('failed');
    expect(failed.failure?.reason).toBe('page_failed');
    expect(failed.failure?.message).toContain('partition 2');
    expect((await engine.deps.sources.require(sourceId)).watermark).toBeNull();
    const letters = await engine.deps.deadLetters.listAll(sourceId);
    expect(letters).toHaveLength(1);
    expect(letters[0]).toMatchObject({
      kind: 'page',
      ref: `window:${failingFrom}..${truth[225]!.updatedAt}`,
    });
    expect(letters[0]!.scope?.window).toEqual({ from: failingFrom, until: truth[225]!.updatedAt });

    // Retry-failed fetches that window's first page again, within its window.
    source.failWhen = undefined;
    const retried = await run(sourceId, 'dlq_retry');
    expect(retried.state).toBe('succeeded');
    expect(retried.progress.processed).toBe(10);
    expect(source.requests.at(-1)!.window).toEqual({ from: failingFrom, until: truth[225]!.updatedAt });
    expect(await engine.deps.deadLetters.listAll(sourceId)).toHaveLength(0);
  }, 60_000);

  it('cancel stops every partition: no page is committed or fetched after it', async () => {
    const { sourceId, source } = await newSource(300);
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    source.beforePage = (window) => (window ? gate : undefined);
    const started = await startRun(engine.deps, { sourceId, mode: 'full' });
    await waitForRun(engine.deps, started.runId, () => source.requests.length >= 3, 20_000);

    await engine.deps.lifecycle.cancel(started.runId, clock.now());
    const requestsAtCancel = source.requests.length;
    release();
    await new Promise((resolve) => setTimeout(resolve, 2_500));

    const cancelled = await engine.deps.runs.require(started.runId);
    expect(cancelled.state).toBe('cancelled');
    expect(cancelled.progress.pages).toBe(0);
    expect(source.requests.length).toBe(requestsAtCancel);
    source.beforePage = undefined;
  }, 60_000);

  it('duplicate deliveries of a partition page are dropped and never count twice', async () => {
    const { sourceId, source } = await newSource(300);
    const started = await startRun(engine.deps, { sourceId, mode: 'full' });
    const planned = await waitForRun(engine.deps, started.runId, (r) => r.partitions !== undefined);
    // Each partition's page 1 is delivered a second time.
    for (const partition of partitionsOf(planned)) {
      await engine.deps.queue.send({
        v: 1,
        runId: started.runId,
        sourceId,
        epoch: 1,
        page: 1,
        cursor: null,
        partition: partition.index,
      });
    }
    const done = await waitForRun(engine.deps, started.runId);
    const late = await processPage(engine.deps, {
      v: 1,
      runId: started.runId,
      sourceId,
      epoch: 1,
      page: 2,
      cursor: null,
      partition: 0,
    });

    expect(done.state).toBe('succeeded');
    expect(done.progress.processed).toBe(300);
    expect(partitionsOf(done).reduce((sum, p) => sum + p.pages, 0)).toBe(done.progress.pages);
    expect(late).toMatchObject({ outcome: 'dropped' });
    await expectStoreMatches(sourceId, source);
  }, 60_000);
});

describe('github-issues against the live fake source', () => {
  async function githubSource(entities: number) {
    const fake = await startFake({ entities, seed: 4_100 + counter, latencyMs: 0 });
    const sourceId = `part-gh-${++counter}`;
    const { connector, config } = sourceOfShape(fake, 'github');
    await putSource(engine.deps, sourceId, connector, config);
    return { fake, sourceId };
  }

  it('a full run is split by the data and stores every issue once, N/M exact', async () => {
    const { fake, sourceId } = await githubSource(400);

    const done = await run(sourceId);

    expect(done.state).toBe('succeeded');
    const partitions = partitionsOf(done);
    expect(partitions).toHaveLength(4);
    // Windows chosen from the data: each holds a similar share (400 / 4, give or take a page).
    for (const p of partitions) expect(p.processed).toBeGreaterThan(60);
    const truth = fake.truth().entities.length - fake.truth().invalidIds.length;
    expect(done.progress.processed).toBe(truth);
    expect(done.progress.total).toBe(truth);
    const comparison = await compareWithTruth(engine.deps, sourceId, fake, 'github');
    expect(comparison.missing).toEqual([]);
    expect(comparison.stale).toEqual([]);
  }, 90_000);

  it('a broken issue at a window boundary is listed by both windows and dead-lettered and counted once', async () => {
    const fake = await startFake({
      entities: 200,
      seed: 4_900,
      latencyMs: 0,
      profile: { invalidRecords: 6 },
    });
    const sourceId = `part-gh-${++counter}`;
    // The GitHub listing, read by the connector whose windows the test chooses.
    const { config } = sourceOfShape(fake, 'github', { config: { repo: 'parts' } });
    await putSource(engine.deps, sourceId, 'github-chosen-windows', config);
    const truth = fake.truth();
    const broken = truth.entities.find((e) => truth.invalidIds.includes(e.id) && e !== truth.entities[0])!;
    // The first window ends at the broken issue's own time: it is listed before the first valid
    // issue at or after it, so that window delivers it (it cannot read its time), and the next
    // window, which starts at that time, lists it again.
    chosenBoundaries = [broken.updatedAt];

    const done = await run(sourceId);

    expect(done.state).toBe('succeeded');
    expect(partitionsOf(done)).toHaveLength(2);
    const filed = (await engine.deps.deadLetters.listAll(sourceId)).filter((e) => e.runId === done.runId);
    expect(filed.map((e) => e.ref)).toContain(String(broken.number));
    expect(done.errorCount).toBe(filed.length);
    expect(done.errorCount).toBe(truth.invalidIds.length);
    expect(partitionsOf(done).reduce((sum, p) => sum + p.errorCount, 0)).toBe(done.errorCount);
    expect(done.progress.processed).toBe(truth.entities.length - truth.invalidIds.length);
  }, 90_000);

  it('a full run raced by edits stores every live issue at its latest version, without another run', async () => {
    const { fake, sourceId } = await githubSource(400);
    fake.control.setLive({ touchesPerPage: 2, addsPerPage: 1, maxChanges: 60 });

    const raced = await run(sourceId);
    fake.control.setLive(null);

    expect(raced.state).toBe('succeeded');
    expect(partitionsOf(raced).length).toBeGreaterThan(1);
    expect(fake.control.liveHistory().touched.length).toBeGreaterThan(10);
    const comparison = await compareWithTruth(engine.deps, sourceId, fake, 'github');
    expect(comparison.missing).toEqual([]);
    expect(comparison.stale).toEqual([]);
  }, 90_000);
});

describe('the API and the CLI show partitions', () => {
  let api: ApiDeps | undefined;
  function call(method: string, url: string, body?: unknown) {
    api ??= apiOver(engine);
    return callApi<RunView>(api, method, url, body);
  }

  it('a run started with a bound of 2 lists its 2 partitions: window, position, state and N', async () => {
    const { sourceId } = await newSource(300);

    const started = await call('POST', `/sources/${sourceId}/runs`, { mode: 'full', partitions: 2 });
    await waitForRun(engine.deps, started.json.runId);
    const view = (await call('GET', `/runs/${started.json.runId}`)).json;

    expect(started.status).toBe(202);
    expect(view.summary).toBe('300 processed, 0 dead letters filed');
    expect(view.partitions).toHaveLength(2);
    const [first, second] = view.partitions!;
    expect(first).toMatchObject({ index: 0, state: 'done', window: { from: null } });
    expect(second).toMatchObject({
      index: 1,
      state: 'done',
      window: { from: first!.window.until, until: null },
    });
    expect(first!.processed + second!.processed).toBe(300);
    expect(first!.checkpoint?.page).toBe(first!.pages);
    const lines = runLines(view);
    expect(lines).toContain('partitions 2: 2 done');
    expect(lines.find((l) => l.startsWith('  #0  [start, '))).toContain(`${first!.processed} processed`);
    expect(lines.find((l) => l.startsWith('  #1  ['))).toContain(', open)  done');
  }, 60_000);

  it('an unpartitioned run shows no partitions; a bound outside 1–64 is refused', async () => {
    const { sourceId } = await newSource(20);

    const refused = await call('POST', `/sources/${sourceId}/runs`, { mode: 'full', partitions: 65 });
    const started = await call('POST', `/sources/${sourceId}/runs`, { mode: 'full' });
    await waitForRun(engine.deps, started.json.runId);
    const view = (await call('GET', `/runs/${started.json.runId}`)).json;

    expect(refused.status).toBe(400);
    expect(view.partitions).toBeUndefined();
    expect(runLines(view).some((l) => l.startsWith('partitions'))).toBe(false);
  }, 60_000);
});
