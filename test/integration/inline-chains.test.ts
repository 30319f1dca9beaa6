import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { ulid } from 'ulid';
import { describe, expect, it } from 'vitest';
import { RELIABILITY } from '../../lib/config/constants.js';
import { processPage, reap } from '../../lib/engine/index.js';
import { CHAINS_INLINE } from '../../lib/engine/run/finish.js';
import { activeShardOf } from '../../lib/resources/definitions.js';
import { movableClock } from '../support/crash.js';
import { fakeRestConfig, putSource, useEngineWithFakes } from '../support/harness.js';

/**
 * Runs stored by the earlier layout — the run's chain and its partitions inside the run item —
 * that were in flight when this version took over: they are ended failed, saying why, never
 * continued (docs/design.md).
 */

const clock = movableClock();
const { engine } = useEngineWithFakes('inline-chains', { workers: 0, clock });

/** A running partitioned run as the earlier version stored it, holding its source's lock. */
async function inlineRun(sourceId: string): Promise<string> {
  await putSource(engine.deps, sourceId, 'rest-json', fakeRestConfig('http://127.0.0.1:9'));
  const runId = ulid(clock.now());
  const now = clock.now();
  await engine.deps.sources.acquireLock(sourceId, runId, now);
  const chain = { nextPage: 2, heartbeatAt: now, handoff: { page: 2, at: now, sentAt: now } };
  await engine.aws.clients.doc.send(
    new PutCommand({
      TableName: engine.aws.names.syncRunsTable,
      Item: {
        runId,
        sourceId,
        mode: 'full',
        trigger: 'api',
        params: {},
        paramsHash: 'h',
        state: 'running',
        epoch: 1,
        progress: { processed: 10, total: null, pages: 1 },
        errorCount: 0,
        restarts: 0,
        resume: { reason: 'fresh_start', from: 'scratch', at: now },
        createdAt: now,
        startedAt: now,
        updatedAt: now,
        activeShard: activeShardOf(runId),
        ...chain,
        openPartitions: 1,
        partitions: {
          '0': { ...chain, window: { from: null, until: null }, state: 'running', processed: 10 },
        },
      },
    }),
  );
  return runId;
}

describe('a run stored with its chains inside the run item', () => {
  it('is ended failed by the first page message that meets it, its lock released', async () => {
    const runId = await inlineRun('inline-step');

    const result = await processPage(engine.deps, {
      v: 1,
      runId,
      sourceId: 'inline-step',
      epoch: 1,
      page: 2,
      cursor: 'c',
      partition: 0,
    });

    expect(result).toEqual({ outcome: 'failed', reason: CHAINS_INLINE });
    const run = await engine.deps.runs.require(runId);
    expect(run).toMatchObject({ state: 'failed', failure: { reason: CHAINS_INLINE } });
    expect(run.progress.processed).toBe(10);
    expect((await engine.deps.sources.require('inline-step')).activeRunId).toBeNull();
  });

  it('is ended failed by the reaper when no message comes', async () => {
    const runId = await inlineRun('inline-reaped');
    clock.advance(RELIABILITY.silenceThresholdMs + 1_000);

    const report = await reap(engine.deps);

    expect(report.actions).toContainEqual({ runId, verdict: CHAINS_INLINE, action: 'fail' });
    expect((await engine.deps.runs.require(runId)).state).toBe('failed');
    expect((await engine.deps.sources.require('inline-reaped')).activeRunId).toBeNull();
  });
});
