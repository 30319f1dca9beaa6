const { engine } = useEngineWithFakes('completeness');

import { afterAll, describe, expect, it } from 'vitest';
import { toRunView } from '../../lib/api/views.js';
import { startRun } from '../../lib/engine/index.js';
import type { SyncRun } from '../../lib/run/model.js';
import { type FakeSource, fakeRestConfig, startFakeSource } from '../../tools/fake-source/index.js';
import { putSource, useEngineWithFakes, waitForRun } from '../support/harness.js';

/**
 * The completeness check at the end of every full and reconciliation run: the source's count
 * against what the run read and what the store holds, counted in the store.
 */

const fakes: FakeSource[] = [];
let counter = 0;

afterAll(async () => {
  await Promise.all(fakes.map((f) => f.stop()));
});

async function source(options: { countSkew?: number; invalidRecords?: number; totalPath?: boolean } = {}) {
  const fake = await startFakeSource({
    entities: 60,
    seed: 7_100 + counter,
    latencyMs: 0,
    profile: { invalidRecords: options.invalidRecords ?? 0 },
    traits: { countSkew: options.countSkew ?? 0 },
  });
  fakes.push(fake);
  const sourceId = `complete-${++counter}`;
  const config = fakeRestConfig(fake.url, { pageSize: 25 });
  if (options.totalPath === false) delete config.totalPath;
  await putSource(engine.deps, sourceId, 'rest-json', config);
  return { fake, sourceId };
}

async function run(sourceId: string, mode: 'full' | 'reconciliation' | 'incremental'): Promise<SyncRun> {
  const started = await startRun(engine.deps, { sourceId, mode });
  return waitForRun(engine.deps, started.runId, undefined, 60_000);
}

describe('the completeness check of a run', () => {
  it('verifies a full run: the source count, what the run read and what the store holds agree', async () => {
    const { sourceId } = await source({ invalidRecords: 3 });

    const done = await run(sourceId, 'full');

    expect(done.state).toBe('succeeded');
    expect(done.completeness).toMatchObject({
      verdict: 'verified',
      shortBy: 0,
      sourceCount: 60,
      processed: 57,
      failed: 3,
      stored: 57,
    });
    expect(toRunView(done, Date.now()).completeness?.verdict).toBe('verified');
  });

  it('says a run is short by 1 when the source lists one row fewer than it counts, in the run, its view and its summary', async () => {
    const { sourceId } = await source({ countSkew: 1 });

    const done = await run(sourceId, 'full');

    expect(done.state).toBe('succeeded');
    expect(done.completeness).toMatchObject({ verdict: 'short', shortBy: 1, sourceCount: 61, stored: 60 });
    expect(done.completeness?.reason).toContain('counts 61 but listed 60');
    const view = toRunView(done, Date.now());
    expect(view.summary).toContain('short by 1');
    const reconciled = await run(sourceId, 'reconciliation');
    expect(reconciled.completeness).toMatchObject({ verdict: 'short', shortBy: 1 });
  });

  it('without a source count, checks what the run read against the store; incremental runs are not checked', async () => {
    const { sourceId } = await source({ totalPath: false });

    const done = await run(sourceId, 'full');
    expect(done.completeness).toMatchObject({
      verdict: 'verified',
      sourceCount: null,
      processed: 60,
      stored: 60,
    });

    const incremental = await run(sourceId, 'incremental');
    expect(incremental.completeness).toBeUndefined();
  });
});
