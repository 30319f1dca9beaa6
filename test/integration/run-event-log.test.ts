import { ulid } from 'ulid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { destroyAwsClients } from '../../lib/aws/clients.js';
import type { RunEventInput } from '../../lib/run/run-events.js';
import { RunEventLog } from '../../lib/store/run-event-log.js';
import { SyncRunStore } from '../../lib/store/sync-runs.js';
import { setUpTestAws, type TestAws } from '../support/aws.js';
import { type FaultyAws, withDynamoFaults } from '../support/dynamo-faults.js';
import { newRun } from '../support/runs.js';

/**
 * A run's story as stored, held to DynamoDB's own request rules (the strict layer) and to what
 * no emulator does: transactions that collide (the fault layer), and two writers appending to
 * one run at the same moment — a reaper telling `waiting` while a worker tells `pages`.
 */
let aws: TestAws;
let faulty: FaultyAws;
const T0 = 1_800_000_000_000;

beforeAll(async () => {
  aws = await setUpTestAws('run-events');
  faulty = await withDynamoFaults(aws, { seed: 7 });
});
afterAll(() => {
  destroyAwsClients(aws.clients);
  destroyAwsClients(faulty.clients);
  faulty.faults.destroy();
});

const log = (max?: number) =>
  new RunEventLog(aws.clients.doc, aws.names.syncRunsTable, max === undefined ? {} : { max });

function pages(throughPage: number, epoch = 1): RunEventInput {
  return {
    type: 'pages',
    epoch,
    at: T0 + throughPage,
    detail: { partition: null, throughPage, pages: 10, processed: throughPage * 20 },
  };
}
const started: RunEventInput = {
  type: 'started',
  epoch: 1,
  at: T0,
  detail: { mode: 'full', trigger: 'api', verdict: 'fresh_start' },
};
const ended = (epoch: number): RunEventInput => ({
  type: 'ended',
  epoch,
  at: T0 + 10_000,
  detail: { state: 'succeeded', failure: null, processed: 200, deadLetters: 0, total: 200 },
});

describe('the run event log', () => {
  it('keeps events in order and lists them a page at a time, from a cursor', async () => {
    const story = log();
    const runId = ulid();
    for (const event of [started, pages(10), pages(20), pages(30), ended(1)])
      expect(await story.append(runId, event)).toMatchObject({ kind: 'append' });

    const first = await story.list(runId, { limit: 2 });
    expect(first.items.map((e) => e.seq)).toEqual([1, 2]);
    expect(first.items[0]).toEqual({
      seq: 1,
      at: new Date(T0).toISOString(),
      epoch: 1,
      type: 'started',
      detail: { mode: 'full', trigger: 'api', verdict: 'fresh_start' },
    });
    const second = await story.list(runId, { limit: 2, cursor: first.cursor });
    expect(second.items.map((e) => e.type)).toEqual(['pages', 'pages']);
    const last = await story.list(runId, { limit: 2, cursor: second.cursor });
    expect(last.items.map((e) => e.type)).toEqual(['ended']);
    expect(last.cursor).toBeUndefined();
    expect(await story.list(ulid(), { limit: 10 })).toEqual({ items: [], cursor: undefined, dropped: 0 });
  });

  it('writes a re-sent append once, refuses a fenced epoch and anything after the end', async () => {
    const story = log();
    const runId = ulid();
    await story.append(runId, started);
    await story.append(runId, pages(10, 2));
    expect(await story.append(runId, pages(10, 2))).toEqual({ kind: 'duplicate' });
    expect(await story.append(runId, pages(20, 1))).toEqual({ kind: 'stale' });
    await story.append(runId, ended(2));
    expect(await story.append(runId, pages(30, 2))).toEqual({ kind: 'after_end' });
    expect((await story.list(runId, { limit: 10 })).items.map((e) => e.type)).toEqual([
      'started',
      'pages',
      'ended',
    ]);
  });

  it('is bounded: a full story counts what it drops and still takes its `ended`', async () => {
    const story = log(4);
    const runId = ulid();
    for (const event of [started, pages(10), pages(20), pages(30), pages(40), pages(50)])
      await story.append(runId, event);
    expect(await story.append(runId, ended(1))).toEqual({ kind: 'append', seq: 4 });

    const listed = await story.list(runId, { limit: 10 });
    expect(listed.items.map((e) => e.type)).toEqual(['started', 'pages', 'pages', 'ended']);
    expect(listed.dropped).toBe(3);
  });

  it('lands every one of many appends racing on one run, through collisions, each at its own place', async () => {
    const racing = new RunEventLog(faulty.clients.doc, aws.names.syncRunsTable, { pause: async () => {} });
    faulty.faults.set({ seed: 7, transactionConflict: 0.3 });
    const runId = ulid();
    const before = faulty.faults.counts.transactionConflicts;
    try {
      await Promise.all(Array.from({ length: 8 }, (_, i) => racing.append(runId, pages((i + 1) * 10))));
    } finally {
      faulty.faults.set({ seed: 7 });
    }

    const listed = await log().list(runId, { limit: 100 });
    expect(listed.items.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(new Set(listed.items.map((e) => e.type === 'pages' && e.detail.throughPage)).size).toBe(8);
    expect(faulty.faults.counts.transactionConflicts).toBeGreaterThan(before);
  });

  it('lands every one of many appends racing on one run without collisions too: a lost race reads again', async () => {
    const racing = new RunEventLog(aws.clients.doc, aws.names.syncRunsTable, { pause: async () => {} });
    const runId = ulid();
    await Promise.all(Array.from({ length: 8 }, (_, i) => racing.append(runId, pages((i + 1) * 10))));

    const listed = await log().list(runId, { limit: 100 });
    expect(listed.items.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(new Set(listed.items.map((e) => e.type === 'pages' && e.detail.throughPage)).size).toBe(8);
  });

  it('is deleted with its source’s runs, and never listed as a run', async () => {
    const runs = new SyncRunStore(aws.clients.doc, aws.names.syncRunsTable);
    const sourceId = `src-${ulid().toLowerCase()}`;
    const run = await runs.create(newRun({ sourceId, now: T0 }));
    const story = log();
    await story.append(run.runId, started);
    await story.append(run.runId, pages(10));

    const listed = await runs.listBySource(sourceId);
    expect(listed.items.map((r) => r.runId)).toEqual([run.runId]);
    const across = await runs.listAcrossSources({ limit: 100 });
    expect(across.items.every((r) => !r.runId.includes('#'))).toBe(true);

    expect(await story.deleteAllOf(sourceId)).toBe(1);
    expect(await story.head(run.runId)).toBeUndefined();
    expect((await story.list(run.runId, { limit: 10 })).items).toEqual([]);
  });
});
