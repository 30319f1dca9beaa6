import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { startRun } from '../../lib/engine/index.js';
import { MAX_PARTITIONS_LIMIT, partitionsOf } from '../../lib/run/partitions.js';
import { putSource, useEngineWithFakes, waitForRun } from '../support/harness.js';
import { memorySource, withMemoryKeyed } from '../support/memory-keyed.js';

/**
 * A run split into the most partitions a run may have, each reading a window with long cursors:
 * every chain lives on its own item, so the run item stays the same small size at every commit,
 * whatever k and the cursors' length (docs/design.md, "Page chains").
 */

const K = MAX_PARTITIONS_LIMIT;
/** ~2 KB cursors: a keyset position naming long ids. */
const CURSOR_PADDING = 2_000;
const RUN_ITEM_LIMIT = 1_024;

/** The run item's size as stored (attribute names and values, as JSON: an upper bound of DynamoDB's count). */
const runItemSizes: number[] = [];
const { engine } = useEngineWithFakes('chains-scale', {
  workers: 4,
  connectors: withMemoryKeyed,
  env: {
    MAX_PARTITIONS_PER_RUN: String(K),
    MIN_ENTITIES_PER_PARTITION: '1',
    // No cap on requests in flight: it would bound k below 64.
    MAX_CONCURRENT_REQUESTS_PER_CREDENTIAL: '0',
  },
  hooks: {
    async at(point, context) {
      if (point !== 'afterCommit') return;
      const { Item } = await engine.aws.clients.doc.send(
        new GetCommand({
          TableName: engine.aws.names.syncRunsTable,
          Key: { runId: context.runId },
          ConsistentRead: true,
        }),
      );
      runItemSizes.push(Buffer.byteLength(JSON.stringify(Item)));
    },
  },
});

/** Windows holding two entities, read in two pages with a long cursor between them; the others hold one. */
const LONG = 4;

describe('a partitioned run of 64 chains with 2 KB cursors', () => {
  it('succeeds, and its run item stays under 1 KB at every commit', async () => {
    const source = memorySource('scale', K + LONG);
    // Window boundaries: after two entities for the first LONG windows, after one for the rest.
    const times = source.truth().map((e) => e.updatedAt);
    source.fixedPlan = Array.from({ length: K - 1 }, (_, i) => times[i < LONG ? 2 * (i + 1) : LONG + i + 1]!);
    await putSource(engine.deps, 'scale', 'memory-keyed', {
      key: 'scale',
      pageSize: 1,
      cursorPadding: CURSOR_PADDING,
    });

    const started = await startRun(engine.deps, { sourceId: 'scale', mode: 'full', partitions: K });
    const run = await waitForRun(engine.deps, started.runId, undefined, 600_000);

    expect(run.state).toBe('succeeded');
    expect(partitionsOf(run)).toHaveLength(K);
    expect(partitionsOf(run).every((p) => p.state === 'done')).toBe(true);
    const bounded = partitionsOf(run).filter((p) => p.window.until !== null);
    expect(bounded.filter((p) => p.pages === 2)).toHaveLength(LONG);
    // The open window reads a tail pass, one page more, when it ended before the others did.
    const open = partitionsOf(run).at(-1)!;
    const tailPages = open.tailFrom ? 1 : 0;
    expect(open.pages).toBe(1 + tailPages);
    expect(run.progress).toMatchObject({ processed: K + LONG, pages: K + LONG + tailPages });
    // Every commit: the plan and every page of every partition.
    expect(runItemSizes.length).toBeGreaterThanOrEqual(K + LONG + 1);
    expect(Math.max(...runItemSizes)).toBeLessThan(RUN_ITEM_LIMIT);
  }, 650_000);
});
