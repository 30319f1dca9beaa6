import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRun } from '../../lib/engine/start-run.js';
import { MAX_PARTITIONS_LIMIT, partitionsOf } from '../../lib/run/partitions.js';
import { putSource, setUpTestEngine, type TestEngine, waitForRun } from '../support/harness.js';
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
let engine: TestEngine;

beforeAll(async () => {
  engine = await setUpTestEngine('chains-scale', {
    connectors: withMemoryKeyed,
    env: { MAX_PARTITIONS_PER_RUN: String(K), MIN_ENTITIES_PER_PARTITION: '1' },
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
  engine.runtime({ workers: 4 }).start();
});
afterAll(() => engine.stop());

describe('a partitioned run of 64 chains with 2 KB cursors', () => {
  it('succeeds, and its run item stays under 1 KB at every commit', async () => {
    const source = memorySource('scale', 2 * K);
    // Two entities a window, one a page: each partition commits a page with a long cursor, then its last.
    source.fixedPlan = source
      .truth()
      .filter((_, i) => i > 0 && i % 2 === 0)
      .map((e) => e.updatedAt);
    await putSource(engine.deps, 'scale', 'memory-keyed', {
      key: 'scale',
      pageSize: 1,
      cursorPadding: CURSOR_PADDING,
    });

    const started = await startRun(engine.deps, { sourceId: 'scale', mode: 'full', partitions: K });
    const run = await waitForRun(engine.deps, started.runId, undefined, 240_000);

    expect(run.state).toBe('succeeded');
    expect(partitionsOf(run)).toHaveLength(K);
    expect(partitionsOf(run).every((p) => p.state === 'done' && p.pages === 2)).toBe(true);
    expect(run.progress).toMatchObject({ processed: 2 * K, pages: 2 * K });
    // Every commit: the plan and the 2 pages of each partition.
    expect(runItemSizes.length).toBeGreaterThanOrEqual(2 * K + 1);
    expect(Math.max(...runItemSizes)).toBeLessThan(RUN_ITEM_LIMIT);
  }, 300_000);
});
