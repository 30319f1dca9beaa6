import { describe, expect, it } from 'vitest';
import { partitionsOf } from '../../lib/run/partitions.js';
import { fakeRestConfig } from '../../tools/fake-source/index.js';
import { putSource, useEngineWithFakes } from '../support/harness.js';
import { compareWithTruth } from '../support/live.js';

/**
 * A source that cuts each page to its limit and then drops the rows the caller may not see
 * (the fake source's `postLimitFilter`: Stripe's and Slack's list endpoints, Jira's search), so
 * its pages come back short, even empty, with a next cursor. A run that took a short page for the
 * end of its window lost the rest of the window for good: the run's watermark is the latest
 * version any window read, so no later incremental run asked for them again.
 */

const { engine, startFake, runToEnd } = useEngineWithFakes('short-pages', {
  env: { MAX_PARTITIONS_PER_RUN: '4', MIN_ENTITIES_PER_PARTITION: '20' },
});

const ENTITIES = 200;

describe('a source that drops rows after its limit', () => {
  it('a partitioned full run and an incremental run store every row it shows; the run keeps the total the source states', async () => {
    const fake = await startFake({
      // 200 entities in pages of 10: windows of ~40, split as 400 in pages of 20 were.
      entities: ENTITIES,
      seed: 1_818,
      latencyMs: 0,
      traits: { postLimitFilter: 0.15 },
    });
    const sourceId = 'short-pages-cursor';
    await putSource(
      engine.deps,
      sourceId,
      'rest-json',
      fakeRestConfig(fake.url, {
        pageSize: 10,
        pagination: { type: 'cursor', cursorParam: 'cursor', nextCursorPath: 'next_cursor', stable: false },
      }),
    );
    const hidden = new Set(fake.truth().filteredIds);
    expect(hidden.size).toBeGreaterThan(20);

    const full = await runToEnd(sourceId, 'full');
    fake.control.touch(
      fake
        .truth()
        .entities.slice(0, 30)
        .map((e) => e.id),
    );
    const incremental = await runToEnd(sourceId, 'incremental');

    expect(full.state).toBe('succeeded');
    expect(partitionsOf(full).length).toBeGreaterThan(1);
    expect(full.progress.processed).toBe(ENTITIES - hidden.size);
    // "N of M" keeps the source's M: its total counts the rows it hides too (as Jira's does).
    expect(full.progress.total).toBe(ENTITIES);
    expect(full.outcome?.total).toBe(ENTITIES);
    expect(incremental.state).toBe('succeeded');
    const comparison = await compareWithTruth(engine.deps, sourceId, fake, 'rest');
    expect(comparison.missing.filter((id) => !hidden.has(id))).toEqual([]);
    expect(comparison.stale.filter((id) => !hidden.has(id))).toEqual([]);
  }, 120_000);
});
