import { describe, expect, it } from 'vitest';
import { fakeRestConfig, putSource, useEngineWithFakes } from '../support/harness.js';

/**
 * What a fetch by id may conclude (retry-failed and reconciliation's absence confirmations): a dead
 * letter is resolved only by a stored item or a confirmed deletion, and an answer that is not the
 * record asked for (another id, another repository) means the entity is gone from this source.
 */

const { engine, startFake, runToEnd } = useEngineWithFakes('fetchbyid', { heartbeatIntervalMs: 500 });
let counter = 0;

async function restSource(entities: number) {
  const fake = await startFake({ entities, seed: 1_800 + counter, latencyMs: 0 });
  const sourceId = `fbi-rest-${++counter}`;
  await putSource(engine.deps, sourceId, 'rest-json', fakeRestConfig(fake.url, { pageSize: 20 }));
  return { fake, sourceId };
}

describe('retry-failed of items too large to store', () => {
  it('keeps the dead letter of an item that is still too large, and resolves the one that now fits', async () => {
    const { fake, sourceId } = await restSource(40);
    fake.control.resize(['e-000007', 'e-000009'], 400 * 1_024);
    const full = await runToEnd(sourceId, 'full');
    expect(full.errorCount).toBe(2);
    const [shrunk] = fake.control.resize(['e-000009'], 100).changed;

    const retry = await runToEnd(sourceId, 'dlq_retry');

    expect(retry).toMatchObject({ state: 'succeeded', errorCount: 1, progress: { processed: 1 } });
    const open = await engine.deps.deadLetters.listAll(sourceId);
    expect(open.map((e) => [e.ref, e.runId, e.attempts])).toEqual([['e-000007', retry.runId, 2]]);
    expect(open[0]?.reason).toContain('too large');
    expect((await engine.deps.items.get(sourceId, 'e-000009'))?.version).toBe(shrunk?.updatedAt);
    expect(await engine.deps.items.get(sourceId, 'e-000007')).toBeUndefined();
  });
});
