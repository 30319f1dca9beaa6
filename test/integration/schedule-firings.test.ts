import { ulid } from 'ulid';
import { describe, expect, it } from 'vitest';
import { destroyAwsClients } from '../../lib/aws/clients.js';
import {
  LOCAL_SCHEDULER_ROLE_ARN,
  type ScheduledStartOutcome,
  startScheduledRun,
} from '../../lib/engine/index.js';
import { ScheduleFirer } from '../../lib/local/schedule-firer.js';
import { LOCAL_START_RUN_ARN, SourceSchedules } from '../../lib/queue/source-schedules.js';
import { ScheduleFirings } from '../../lib/store/schedule-firings.js';
import { withDynamoFaults } from '../support/dynamo-faults.js';
import { fakeRestConfig, putSource, useEngineWithFakes, waitForRun } from '../support/harness.js';

/**
 * Scheduler delivers at least once: the same firing of a source schedule may arrive twice, the
 * second time after the first one's run ended. It must start one run, and the next firing another.
 */

const { engine, startFake } = useEngineWithFakes('firings', { workers: 1 });

/** A source on a small fake with one `rate(1 minute)` schedule in Scheduler. */
async function scheduledSource(): Promise<string> {
  const sourceId = `fire-${ulid().toLowerCase()}`;
  const fake = await startFake({ entities: 5, seed: 7, latencyMs: 0 });
  await putSource(engine.deps, sourceId, 'rest-json', fakeRestConfig(fake.url));
  await new SourceSchedules(engine.aws.clients.scheduler, {
    groupName: engine.aws.names.scheduleGroup,
    targetArn: LOCAL_START_RUN_ARN,
    roleArn: LOCAL_SCHEDULER_ROLE_ARN,
  }).reconcile(sourceId, [{ expression: 'rate(1 minute)', mode: 'full' }]);
  return sourceId;
}

function scheduledInput(sourceId: string, scheduledTime: string): string {
  return JSON.stringify({ sourceId, mode: 'full', schedule: `src-${sourceId}-0`, scheduledTime });
}

describe('one run per schedule firing', () => {
  it('a firing delivered twice, the second after its run ended, starts one run; the next firing another', async () => {
    const sourceId = await scheduledSource();
    const outcomes: ScheduledStartOutcome[] = [];
    const inputs: string[] = [];
    const target = async (input: string) => {
      const parsed = JSON.parse(input) as { sourceId: string };
      if (parsed.sourceId !== sourceId) return;
      inputs.push(input);
      const outcome = await startScheduledRun(engine.deps, input);
      outcomes.push(outcome);
      // The duplicate comes only once this firing's run has ended, when no lock turns it away.
      if (outcome.started) await waitForRun(engine.deps, outcome.runId);
    };
    let now = Date.now();
    const firer = new ScheduleFirer(
      engine.aws.clients.scheduler,
      engine.aws.names.scheduleGroup,
      new Map([[LOCAL_START_RUN_ARN, target]]),
      engine.deps.logger,
      () => now,
      { deliveries: 2 },
    );

    await firer.tick(); // first sight: the period counts from here
    now += 61_000;
    await firer.tick();
    expect(outcomes.map((o) => (o.started ? 'started' : o.reason))).toEqual(['started', 'duplicate_firing']);
    // Both deliveries carried the same scheduled time, as Scheduler's do.
    const times = inputs.map((input) => (JSON.parse(input) as { scheduledTime: string }).scheduledTime);
    expect(times[0]).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    expect(times[1]).toBe(times[0]);
    const first = (await engine.deps.runs.listBySource(sourceId)).items;
    expect(first.map((run) => run.state)).toEqual(['succeeded']);

    now += 61_000;
    await firer.tick();
    expect(outcomes.map((o) => (o.started ? 'started' : o.reason))).toEqual([
      'started',
      'duplicate_firing',
      'started',
      'duplicate_firing',
    ]);
    expect((await engine.deps.runs.listBySource(sourceId)).items).toHaveLength(2);
  }, 120_000);

  it('drops a firing older than the last one started, and still starts inputs without a scheduled time', async () => {
    const sourceId = await scheduledSource();
    const later = await startScheduledRun(engine.deps, scheduledInput(sourceId, '2026-12-01T10:01:00Z'));
    expect(later.started).toBe(true);
    if (later.started) await waitForRun(engine.deps, later.runId);
    expect(await startScheduledRun(engine.deps, scheduledInput(sourceId, '2026-12-01T10:00:00Z'))).toEqual({
      started: false,
      reason: 'duplicate_firing',
      scheduledTime: '2026-12-01T10:00:00Z',
    });
    // A schedule written before scheduled times were sent: no record to check, it starts.
    const older = await startScheduledRun(engine.deps, JSON.stringify({ sourceId, mode: 'full' }));
    expect(older.started).toBe(true);
  }, 60_000);

  it('a start that failed leaves its firing unrecorded, so Scheduler’s retry of it starts the run', async () => {
    const sourceId = `fire-${ulid().toLowerCase()}`;
    const fake = await startFake({ entities: 5, seed: 8, latencyMs: 0 });
    // A config the connector refuses: the start throws, as any unexpected failure would.
    await putSource(engine.deps, sourceId, 'rest-json', { url: 42 });
    const input = scheduledInput(sourceId, '2026-12-01T11:00:00Z');
    await expect(startScheduledRun(engine.deps, input)).rejects.toThrow();

    await putSource(engine.deps, sourceId, 'rest-json', fakeRestConfig(fake.url));
    const retried = await startScheduledRun(engine.deps, input);
    expect(retried.started).toBe(true);
    if (retried.started) await waitForRun(engine.deps, retried.runId);
    expect(await startScheduledRun(engine.deps, input)).toMatchObject({ reason: 'duplicate_firing' });
  }, 60_000);

  it('a firing of a source that no longer exists is skipped as such', async () => {
    expect(
      await startScheduledRun(engine.deps, scheduledInput('gone-source', '2026-12-01T12:00:00Z')),
    ).toEqual({ started: false, reason: 'source_not_found' });
  });

  it.each([
    ['the SDK sent it again and the copy was refused', undefined],
    ['no send was left to the SDK and the 500 came through', 1],
  ])(
    'a firing whose record DynamoDB applied and answered with a 500 is recorded, not a duplicate, when %s',
    async (_case, maxAttempts) => {
      const sourceId = await scheduledSource();
      const faulty = await withDynamoFaults(engine.aws, { seed: 9, lostAnswer: 1, limit: 1 }, maxAttempts);
      try {
        const firings = new ScheduleFirings(faulty.clients.doc, engine.aws.names.sourcesTable);
        const at = Date.parse('2026-12-01T13:00:00Z');

        expect(await firings.record(sourceId, 'src-0', at)).toEqual({
          outcome: 'recorded',
          previous: undefined,
        });
        expect(faulty.faults.counts.lostAnswers).toBe(1);
        expect(await firings.record(sourceId, 'src-0', at)).toEqual({ outcome: 'duplicate', last: at });
      } finally {
        destroyAwsClients(faulty.clients);
        faulty.faults.destroy();
      }
    },
  );
});
