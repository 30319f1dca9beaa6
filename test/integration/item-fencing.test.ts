import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { ulid } from 'ulid';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Entity } from '../../lib/connectors/contract.js';
import { processPage, startRun } from '../../lib/engine/index.js';
import { parsePageMessage } from '../../lib/queue/page-message.js';
import { entityId, type FakeSource } from '../../tools/fake-source/index.js';
import { fakeRestConfig, putSource, useEngineWithFakes } from '../support/harness.js';

/*
 * Fenced item writes (issue 10): a worker whose epoch is no longer current, or a late worker of
 * an older run, cannot change newer or equal data and never clears a tombstone.
 */

let fake: FakeSource;
const T = '2026-01-01T00:00:00Z';
const LATER = '2026-01-01T00:00:01Z';

const { engine, startFake } = useEngineWithFakes('itemfence', { workers: 0 });
beforeAll(async () => {
  fake = await startFake({ entities: 20, seed: 5 });
});

const entity = (id: string, version: string, title: string): Entity => ({ id, version, data: { title } });

describe('an item write at an older version', () => {
  it('never overwrites a newer version, even from a later run and epoch; a newer version is written', async () => {
    const earlier = ulid(Date.now() - 60_000);
    await engine.deps.items.load('fence-old', entity('e1', LATER, 'newer version'), earlier, 1, 1);

    // A later run re-reads the entity from a lagging replica that still serves the older version.
    const older = await engine.deps.items.load('fence-old', entity('e1', T, 'older version'), ulid(), 2, 5);

    expect(older.status).toBe('kept_newer');
    expect((await engine.deps.items.get('fence-old', 'e1'))?.data).toEqual({ title: 'newer version' });
    const newer = await engine.deps.items.load(
      'fence-old',
      entity('e1', '2026-01-01T00:00:02Z', 'newest'),
      earlier,
      3,
      1,
    );
    expect(newer).toEqual({ entityId: 'e1', status: 'written', changed: true });
  });
});

describe('an item write at an equal version', () => {
  it('is refused from a fenced worker (an older epoch of the same run): the current epoch’s data stays', async () => {
    const run = ulid();
    await engine.deps.items.load('fence-eq', entity('e1', T, 'current'), run, 1, 2);

    const zombie = await engine.deps.items.load('fence-eq', entity('e1', T, 'stale'), run, 2, 1);

    expect(zombie.status).toBe('kept_newer');
    expect((await engine.deps.items.get('fence-eq', 'e1'))?.data).toEqual({ title: 'current' });
  });

  it('is written by the same worker again (a re-processed page) and by a later epoch', async () => {
    const run = ulid();
    await engine.deps.items.load('fence-same', entity('e1', T, 'first'), run, 1, 1);

    expect((await engine.deps.items.load('fence-same', entity('e1', T, 'again'), run, 2, 1)).status).toBe(
      'written',
    );
    expect((await engine.deps.items.load('fence-same', entity('e1', T, 'resumed'), run, 3, 2)).status).toBe(
      'written',
    );
    expect((await engine.deps.items.get('fence-same', 'e1'))?.data).toEqual({ title: 'resumed' });
  });

  it('from a late worker of an older run does not replace what a newer run wrote', async () => {
    const older = ulid(Date.now() - 60_000);
    const newer = ulid();
    await engine.deps.items.load('fence-runs', entity('e1', T, 'newer run'), newer, 1, 1);

    const late = await engine.deps.items.load('fence-runs', entity('e1', T, 'older run'), older, 2, 3);

    expect(late.status).toBe('kept_newer');
    expect((await engine.deps.items.get('fence-runs', 'e1'))?.data).toEqual({ title: 'newer run' });
  });
});

describe('a tombstone', () => {
  it('is never cleared by a write of an equal version, and is cleared by a newer version', async () => {
    const first = ulid(Date.now() - 60_000);
    await engine.deps.items.load('tomb', entity('e1', T, 'alive'), first, 1, 1);
    const reconciliation = ulid();
    expect(await engine.deps.items.tombstone('tomb', 'e1', reconciliation, 2)).toBe(true);

    // A late duplicate of the page that loaded e1 writes it again.
    await engine.deps.items.load('tomb', entity('e1', T, 'alive'), first, 3, 1);
    expect((await engine.deps.items.get('tomb', 'e1'))?.tombstonedAt).toBe(2);

    // The source changed the entity after it went missing: it exists.
    await engine.deps.items.load('tomb', entity('e1', LATER, 'back'), ulid(), 4, 1);
    const stored = await engine.deps.items.get('tomb', 'e1');
    expect(stored?.tombstonedAt).toBeUndefined();
    expect(stored?.data).toEqual({ title: 'back' });
  });
});

describe('a losing duplicate of a retry-failed page', () => {
  it('does not re-create a dead letter the winning copy resolved', async () => {
    const sourceId = 'retry-loser';
    await putSource(engine.deps, sourceId, 'rest-json', fakeRestConfig(fake.url));
    const ref = entityId(3);
    await engine.deps.deadLetters.record({
      sourceId,
      kind: 'item',
      ref,
      errorClass: 'transient',
      reason: 'HTTP 503',
      attempts: 5,
      runId: 'earlier',
      page: 1,
      now: Date.now() - 60_000,
    });
    const retry = await startRun(engine.deps, { sourceId, mode: 'dlq_retry' });
    const { Messages = [] } = await engine.aws.clients.sqs.send(
      new ReceiveMessageCommand({ QueueUrl: engine.aws.resources.pageQueueUrl, MaxNumberOfMessages: 10 }),
    );
    const message = Messages.map((m) => parsePageMessage(m.Body!)).find((m) => m.runId === retry.runId)!;

    // Copy A's re-fetch hangs until copy B has committed and resolved the entry, then fails.
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const failingFetch: typeof fetch = async () => {
      await gate;
      return new Response('unavailable', { status: 503 });
    };
    const copyA = processPage({ ...engine.deps, fetch: failingFetch }, message);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const copyB = await processPage(engine.deps, message);
    expect(copyB.outcome).toBe('committed');
    expect(await engine.deps.deadLetters.listAll(sourceId)).toEqual([]);
    release();

    expect(['dropped', 'stopped']).toContain((await copyA).outcome);
    expect(await engine.deps.deadLetters.listAll(sourceId)).toEqual([]);
  });
});
