import { describe, expect, it } from 'vitest';
import { partitionsOf } from '../../lib/run/partitions.js';
import { fakeRestConfig } from '../../tools/fake-source/index.js';
import { putSource, useEngineWithFakes } from '../support/harness.js';
import { compareWithTruth } from '../support/live.js';

/**
 * A source whose `since` filter reads whole seconds (the fake source's `since.precision: 's'`, as
 * GitLab's `updated_after` and many REST APIs): windows planned by bisecting time at millisecond
 * precision start mid-second, which such a filter cannot express — a window asked from
 * 10:00:07.500 lists 10:00:07.000 too, a record of the window before it.
 */

const { engine, startFake, runToEnd } = useEngineWithFakes('second-precision', {
  env: { MAX_PARTITIONS_PER_RUN: '4', MIN_ENTITIES_PER_PARTITION: '20' },
});

describe('a source whose since filter reads whole seconds', () => {
  it('a partitioned run over count-bisected windows, declared second-precision, stores every entity once', async () => {
    const fake = await startFake({
      // 120 entities in pages of 10: windows of ~30, split as 400 in pages of 20 were.
      entities: 120,
      seed: 1_909,
      latencyMs: 0,
      traits: { since: { precision: 's' } },
    });
    const sourceId = 'second-precision-cursor';
    await putSource(
      engine.deps,
      sourceId,
      'rest-json',
      fakeRestConfig(fake.url, {
        pageSize: 10,
        sincePrecision: 's',
        pagination: { type: 'cursor', cursorParam: 'cursor', nextCursorPath: 'next_cursor', stable: false },
      }),
    );

    const run = await runToEnd(sourceId, 'full');

    expect(run.state).toBe('succeeded');
    const windows = partitionsOf(run);
    expect(windows.length).toBeGreaterThan(1);
    for (const w of windows) if (w.window.from !== null) expect(w.window.from).toMatch(/\.000Z$/);
    expect(run.errorCount).toBe(0);
    expect(run.progress.processed).toBe(120);
    const comparison = await compareWithTruth(engine.deps, sourceId, fake, 'rest');
    expect(comparison.missing).toEqual([]);
  }, 120_000);
});
