import { describe, expect, it } from 'vitest';
import { runView } from '../../lib/api/views.js';
import type { RunMode } from '../../lib/run/model.js';
import type { FakeSourceOptions } from '../../tools/fake-source/index.js';
import { fakeRestConfig, putSource, useEngineWithFakes } from '../support/harness.js';

/**
 * Dead-letter counts are one truth: a run's K is the number of open entries whose last failure
 * was in it — pages included — the same set `dlq list --run` shows (the live count beside an ended
 * run's fixed one); a later run that stores an entity resolves its open item entry; a
 * retry-failed run that fixes nothing says so, and ends failed.
 */

const setup = useEngineWithFakes('dlq-counts', { heartbeatIntervalMs: 200 });
const { engine } = setup;
let counter = 0;

async function newSource(entities: number, profile: FakeSourceOptions['profile']) {
  const fake = await setup.startFake({ entities, seed: 900 + counter, profile });
  const sourceId = `dlq-counts-${++counter}`;
  await putSource(engine.deps, sourceId, 'rest-json', fakeRestConfig(fake.url));
  return { sourceId, fake };
}

async function runToEnd(sourceId: string, mode: RunMode) {
  return runView(engine.deps, await setup.runToEnd(sourceId, mode));
}

async function listedFor(sourceId: string, runId: string): Promise<number> {
  return (await engine.deps.deadLetters.list(sourceId, { runId, limit: 100 })).items.length;
}

describe("a run's dead-letter count", () => {
  it('counts a dead-lettered first page, as dlq list does', async () => {
    const { sourceId } = await newSource(50, { forceStatus: 401 });

    const run = await runToEnd(sourceId, 'full');

    expect(run.state).toBe('failed');
    expect(run.openDeadLetters).toBe(1);
    expect(run.summary).toBe('0 processed, 1 dead letter filed (live: 1 still open)');
    expect(await listedFor(sourceId, run.runId)).toBe(1);
  });

  it('equals the entries dlq list shows for the run, items included', async () => {
    const { sourceId } = await newSource(200, { invalidRecords: 4 });

    const run = await runToEnd(sourceId, 'full');

    expect(run.openDeadLetters).toBe(4);
    expect(await listedFor(sourceId, run.runId)).toBe(4);
    expect(run.summary).toBe('196/200 processed, 4 dead letters filed (live: 4 still open)');
  });
});

describe('a later run that stores an entity', () => {
  it('resolves its open item entry; while the entity stays broken, the entry stays open', async () => {
    const { sourceId, fake } = await newSource(200, { invalidRecords: 5 });
    const first = await runToEnd(sourceId, 'full');
    expect(first.openDeadLetters).toBe(5);

    const stillBroken = await runToEnd(sourceId, 'full');
    expect(await engine.deps.deadLetters.listAll(sourceId)).toHaveLength(5);
    expect(stillBroken.openDeadLetters).toBe(5);

    fake.control.fix();
    const fixed = await runToEnd(sourceId, 'full');

    expect(await engine.deps.deadLetters.listAll(sourceId)).toEqual([]);
    expect(fixed.openDeadLetters).toBe(0);
    expect((await runView(engine.deps, await engine.deps.runs.require(first.runId))).openDeadLetters).toBe(0);
  });
});

describe('a retry-failed run', () => {
  it('that fixes nothing says so', async () => {
    const { sourceId } = await newSource(100, { invalidRecords: 3 });
    await runToEnd(sourceId, 'full');

    const retry = await runToEnd(sourceId, 'dlq_retry');

    // Not a success: it is never the source's last successful run.
    expect(retry.state).toBe('failed');
    expect(retry.failure?.reason).toBe('retry_fixed_nothing');
    expect(retry.summary).toBe('fixed nothing: 3 failed again (live: 3 still open)');
  });

  it('that fixes some says how many', async () => {
    const { sourceId, fake } = await newSource(100, { invalidRecords: 3 });
    await runToEnd(sourceId, 'full');
    fake.control.fix([...fake.truth().invalidIds].slice(0, 2));

    const retry = await runToEnd(sourceId, 'dlq_retry');

    expect(retry.state).toBe('succeeded');
    expect(retry.summary).toBe('recovered 2, 1 failed again (live: 1 still open)');
  });
});

describe('a filtered dead-letter listing', () => {
  it('fills its page with matches instead of answering an empty page with a cursor', async () => {
    const sourceId = `dlq-filter-${++counter}`;
    const now = Date.now();
    for (let i = 0; i < 30; i++)
      await engine.deps.deadLetters.record({
        sourceId,
        kind: 'item',
        ref: `e-${String(i).padStart(3, '0')}`,
        // Matches are sparse and all at the end: the first reads find none.
        errorClass: i >= 24 ? 'transient' : 'permanent',
        reason: 'x',
        attempts: 1,
        runId: 'r',
        page: 1,
        now,
      });

    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await engine.deps.deadLetters.list(sourceId, {
        errorClass: 'transient',
        limit: 4,
        ...(cursor ? { cursor } : {}),
      });
      expect(page.items.length === 4 || page.cursor === undefined).toBe(true);
      seen.push(...page.items.map((e) => e.ref));
      cursor = page.cursor;
      pages += 1;
    } while (cursor && pages < 10);

    expect(seen).toEqual(['e-024', 'e-025', 'e-026', 'e-027', 'e-028', 'e-029']);
    expect(pages).toBe(2);
  });
});
