import { afterEach, describe, expect, it } from 'vitest';
import { runView } from '../../lib/api/views.js';
import { movableClock } from '../support/crash.js';
import { putSource, useEngineWithFakes } from '../support/harness.js';
import { compareWithTruth } from '../support/live.js';
import { sourceOfShape } from '../support/shapes.js';

/**
 * The watermark is the run's clock, not a record's: a record stamped hours ahead (a host with a
 * fast clock, local time sent with a `Z`) is stored and counted, but the watermark stops at the
 * time the run's listing started, so the next incremental still asks for every edit made since.
 */

const clock = movableClock();
const { engine, startFake, runToEnd } = useEngineWithFakes('future', { clock });
const START = '2024-01-01T00:00:00.000Z';
const HOUR = 3_600_000;
afterEach(() => clock.reset());

describe('a record stamped hours ahead of the run', () => {
  it('is stored and counted, and the next incremental reads every edit made after the run', async () => {
    const fake = await startFake({ entities: 10, seed: 5, startAt: START, latencyMs: 0 });
    // The run starts just after the source's last edit, as a run does.
    clock.setOffset(Date.parse(START) + 10_000 - Date.now());
    fake.control.touch(['e-000003'], { at: new Date(clock.now() + 2 * HOUR).toISOString() });
    const sourceId = 'future-1';
    await putSource(
      engine.deps,
      sourceId,
      'github-issues',
      sourceOfShape(fake, 'github', { pageSize: 4, config: { repo: 'one' } }).config,
    );
    const full = await runToEnd(sourceId, 'full');
    expect(full.state).toBe('succeeded');
    const watermark = (await engine.deps.sources.require(sourceId)).watermark;
    expect(Date.parse(watermark ?? '')).toBeLessThanOrEqual(full.startedAt ?? 0);
    expect((await runView(engine.deps, full)).progress).toMatchObject({ processed: 10, ahead: 1 });

    fake.control.touch(['e-000001', 'e-000005', 'e-000007', 'e-000009']);
    clock.advance(60_000);
    const incremental = await runToEnd(sourceId, 'incremental');

    expect(incremental.state).toBe('succeeded');
    expect(await compareWithTruth(engine.deps, sourceId, fake, 'github')).toMatchObject({
      missing: [],
      stale: [],
    });
  });
});
