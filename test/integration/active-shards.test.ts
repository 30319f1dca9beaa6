import { QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ulid } from 'ulid';
import { describe, expect, it } from 'vitest';
import { RELIABILITY } from '../../lib/config/constants.js';
import { reap } from '../../lib/engine/index.js';
import {
  ACTIVE_SHARD_COUNT,
  activeShardOf,
  INDEX,
  LEGACY_ACTIVE_SHARD,
} from '../../lib/resources/definitions.js';
import { movableClock } from '../support/crash.js';
import { fakeRestConfig, putSource, useEngineWithFakes } from '../support/harness.js';
import { newRun } from '../support/runs.js';

/**
 * Heartbeats move the active index's sort key, so the index is sharded by run id to keep them off
 * one hot partition; the reaper must still find silent runs on every shard.
 */

const clock = movableClock();
const { engine } = useEngineWithFakes('active-shards', { workers: 0, clock });

/** One run id per shard (found by drawing ULIDs; pure, no requests). */
function oneRunIdPerShard(): string[] {
  const byShard = new Map<string, string>();
  while (byShard.size < ACTIVE_SHARD_COUNT) {
    const runId = ulid(clock.now());
    if (!byShard.has(activeShardOf(runId))) byShard.set(activeShardOf(runId), runId);
  }
  return [...byShard.values()];
}

async function queuedRun(runId: string): Promise<void> {
  const sourceId = `shard-${runId.toLowerCase()}`;
  await putSource(engine.deps, sourceId, 'rest-json', fakeRestConfig('http://127.0.0.1:9'));
  await engine.deps.lifecycle.createHoldingLock(newRun({ runId, sourceId, now: clock.now() }));
}

describe('the sharded active-runs index', () => {
  it('spreads run ids over every shard', () => {
    const shards = new Set(Array.from({ length: 2_000 }, () => activeShardOf(ulid())));
    expect(shards.size).toBe(ACTIVE_SHARD_COUNT);
    // Stable: the same run always lands on the same shard.
    const runId = ulid();
    expect(activeShardOf(runId)).toBe(activeShardOf(runId));
  });

  it('writes each run to its own shard, and the reaper finds silent runs on every shard', async () => {
    const runIds = oneRunIdPerShard();
    for (const runId of runIds) await queuedRun(runId);
    // A run written before sharding, on the single legacy partition.
    const legacy = ulid(clock.now());
    await queuedRun(legacy);
    await engine.aws.clients.doc.send(
      new UpdateCommand({
        TableName: engine.aws.names.syncRunsTable,
        Key: { runId: legacy },
        UpdateExpression: 'SET activeShard = :legacy',
        ExpressionAttributeValues: { ':legacy': LEGACY_ACTIVE_SHARD },
      }),
    );

    // Two-sided: each shard partition of the index really holds its run (not one partition for all).
    for (const runId of runIds) {
      const { Items = [] } = await engine.aws.clients.doc.send(
        new QueryCommand({
          TableName: engine.aws.names.syncRunsTable,
          IndexName: INDEX.activeRuns,
          KeyConditionExpression: 'activeShard = :shard',
          ExpressionAttributeValues: { ':shard': activeShardOf(runId) },
        }),
      );
      expect(Items.map((item) => item.runId)).toContain(runId);
    }

    clock.advance(RELIABILITY.silenceThresholdMs + 1_000);
    const report = await reap(engine.deps);
    const seen = new Set([...report.actions.map((a) => a.runId), ...report.waiting.map((w) => w.runId)]);
    for (const runId of [...runIds, legacy]) expect(seen.has(runId), runId).toBe(true);
    expect(report.examined).toBe(runIds.length + 1);
  });
});
