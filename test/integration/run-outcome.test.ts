import { describe, expect, it } from 'vitest';
import type { RunView } from '../../lib/api/schemas/runs.js';
import { runView } from '../../lib/api/views.js';
import { runWords } from '../../lib/cli/commands/source-pause.js';
import { runRow } from '../../lib/cli/output.js';
import { outcomeOf } from '../../lib/cli/watch.js';
import { RETRY_FIXED_NOTHING } from '../../lib/run/model.js';
import { apiOver, callApi } from '../support/api.js';
import { fakeRestConfig, putSource, useEngineWithFakes } from '../support/harness.js';

/**
 * A run's outcome is fixed at its end: what it processed, failed and filed in dead letters, and
 * the source's own total, written by the write that ends it. Later runs that fail the same entries
 * again, or a retry, change what is open now (shown beside it, labelled live), never the figures.
 */

const setup = useEngineWithFakes('run-outcome', { heartbeatIntervalMs: 200 });
const { engine } = setup;
// 200 entities show what 500 would (the README walk's realistic profile), at 40% of the writes.
const ENTITIES = 200;
const BROKEN = 15;
let counter = 0;

async function newSource(profile: Parameters<typeof setup.startFake>[0]['profile'], entities = ENTITIES) {
  const fake = await setup.startFake({ entities, seed: 3400 + counter, profile });
  const sourceId = `outcome-${++counter}`;
  await putSource(engine.deps, sourceId, 'rest-json', fakeRestConfig(fake.url));
  return { sourceId, fake };
}

async function listed(sourceId: string): Promise<RunView[]> {
  const answer = await callApi<{ items: RunView[] }>(
    apiOver(engine),
    'GET',
    `/sources/${sourceId}/runs?limit=10`,
  );
  expect(answer.status).toBe(200);
  return answer.json.items;
}

describe("a run's outcome", () => {
  it('stays what the run filed after another full run and a retry fail the same entries again', async () => {
    const { sourceId } = await newSource({ invalidRecords: BROKEN });

    const first = await runView(engine.deps, await setup.runToEnd(sourceId, 'full'));
    expect(first.state).toBe('succeeded');
    expect(first.outcome).toEqual({
      processed: ENTITIES - BROKEN,
      failed: BROKEN,
      deadLettersFiled: BROKEN,
      sourceTotal: ENTITIES,
      fixed: true,
    });
    // "N of M" keeps the source's M.
    expect(first.progress).toMatchObject({
      processed: ENTITIES - BROKEN,
      total: ENTITIES,
      totalIsEstimate: false,
    });
    expect(first.summary).toBe(`185/200 processed, 15 dead letters filed (live: 15 still open)`);

    const second = await setup.runToEnd(sourceId, 'full');
    const retry = await setup.runToEnd(sourceId, 'dlq_retry');

    const runs = await listed(sourceId);
    const firstNow = runs.find((r) => r.runId === first.runId)!;
    expect(firstNow.outcome).toEqual(first.outcome);
    // Live: the later runs took the entries over, and the line says so beside the fixed figure.
    expect(firstNow.openDeadLetters).toBe(0);
    expect(runRow(firstNow)).toContain(
      `185/200 processed, 15 dead letters filed (live: 0 still open as this run's; 15 since failed again in a later run, resolved or discarded)`,
    );
    const secondNow = runs.find((r) => r.runId === second.runId)!;
    expect(secondNow.outcome?.deadLettersFiled).toBe(BROKEN);

    // The retry fixed nothing: it did not succeed, and it is not the source's last ok run.
    const retryNow = runs.find((r) => r.runId === retry.runId)!;
    expect(retryNow.state).toBe('failed');
    expect(retryNow.failure?.reason).toBe(RETRY_FIXED_NOTHING);
    expect(retryNow.outcome).toMatchObject({ processed: 0, failed: BROKEN, deadLettersFiled: BROKEN });
    expect(retryNow.summary).toBe('fixed nothing: 15 failed again (live: 15 still open)');
    expect(outcomeOf(retryNow).ok).toBe(false);
    expect(outcomeOf(retryNow).line).toContain(`failed`);

    const source = await callApi(apiOver(engine), 'GET', `/sources/${sourceId}`);
    expect(source.json.lastRun.runId).toBe(retry.runId);
    expect(source.json.lastSuccess.runId).toBe(second.runId);
    expect(runWords(source.json.lastSuccess)).toMatch(
      new RegExp(`^${second.runId} succeeded \\(full\\) \\S+: 185/200 processed, 15 dead letters filed$`),
    );
  }, 120_000);

  it('a retry that fixes some ends succeeded; the run that filed them keeps its count', async () => {
    const { sourceId, fake } = await newSource({ invalidRecords: 3 }, 100);
    const first = await setup.runToEnd(sourceId, 'full');
    fake.control.fix([...fake.truth().invalidIds].slice(0, 2));

    const retry = await runView(engine.deps, await setup.runToEnd(sourceId, 'dlq_retry'));

    expect(retry.state).toBe('succeeded');
    expect(retry.summary).toBe('recovered 2, 1 failed again (live: 1 still open)');
    const firstNow = await runView(engine.deps, await engine.deps.runs.require(first.runId));
    expect(firstNow.outcome?.deadLettersFiled).toBe(3);
    expect(firstNow.openDeadLetters).toBe(0);
  }, 60_000);

  it('counts the dead-lettered page that failed the run, which no commit counted', async () => {
    const { sourceId } = await newSource({ forceStatus: 401 }, 50);

    const run = await runView(engine.deps, await setup.runToEnd(sourceId, 'full'));

    expect(run.state).toBe('failed');
    expect(run.errorCount).toBe(0);
    expect(run.outcome).toMatchObject({ processed: 0, failed: 0, deadLettersFiled: 1, fixed: true });
    expect(run.summary).toBe('0 processed, 1 dead letter filed (live: 1 still open)');
  }, 60_000);
});
