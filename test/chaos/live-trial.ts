import type { RunMode } from '../../lib/run/model.js';
import { fakeRestConfig, putSource } from '../support/harness.js';
import { compareWithTruth } from '../support/live.js';
import { backlogViolation, INVARIANT, partitionViolations } from './invariants.js';
import type { RunRecord } from './supervisor.js';
import type { Trial } from './trial-faults.js';

/** How a trial starts and watches one run (trial.ts's `supervisedRun`). */
export type SupervisedRun = (
  trial: Trial,
  mode: RunMode,
  faulty: boolean,
) => Promise<{ record: RunRecord; stallFaults: number }>;

const some = (ids: readonly string[]) => ids.slice(0, 8).join(', ');

/**
 * A live-source trial: an incremental run under the plan's faults while the source is edited
 * before every listing request, then a quiet incremental run: every live entity must be stored at
 * its latest version. With `reconcile`, a reconciliation raced by the same edits must tombstone no
 * live entity, and a quiet one after it exactly the deleted ones. Counts are not exact here — the
 * edits decide them — so the checks are the outcome against the ground truth.
 */
export async function liveTrial(trial: Trial, run: SupervisedRun): Promise<string[]> {
  const { env, fake, plan, sourceId } = trial;
  const live = plan.live;
  if (!live) throw new Error('a live trial needs a live plan');
  const violations: string[] = [];
  const fail = (invariant: string, label: string, detail: string) =>
    violations.push(`${invariant} (${label}): ${detail}`);
  const connector =
    live.shape === 'github' ? 'github-issues' : live.shape === 'gitlab' ? 'gitlab-issues' : 'rest-json';
  await putSource(env.deps, sourceId, connector, config(trial));
  const edits = {
    touchesPerPage: live.touchesPerPage,
    addsPerPage: live.addsPerPage,
    deletesPerPage: live.deletesPerPage,
    tied: live.tied,
  };
  // GitHub numbers and GitLab iids are the entity's number.
  const storeShape = live.shape === 'github' || live.shape === 'gitlab' ? 'github' : 'rest';

  const ended = (label: string, record: RunRecord) => {
    if (record.run.state !== 'succeeded')
      fail(INVARIANT.ended, label, `ended ${record.run.state} (${JSON.stringify(record.run.failure)})`);
    const backlog = backlogViolation(record);
    if (backlog) fail(INVARIANT.stall, label, backlog);
    // The outcome the end fixed is the run's count; its total is what the edited source last said.
    if (record.run.outcome?.processed !== record.run.progress.processed)
      fail(
        INVARIANT.counts,
        label,
        `outcome ${JSON.stringify(record.run.outcome ?? null)} ≠ processed ${record.run.progress.processed}`,
      );
  };

  fake.control.setLive(edits);
  const raced = await run(trial, 'incremental', true);
  fake.control.setLive(null);
  if (plan.partitions !== null)
    for (const v of partitionViolations(raced.record.run, {
      label: 'raced incremental run',
      partitions: plan.partitions,
    }))
      violations.push(v);
  const history = fake.control.liveHistory();
  trial.log(
    `${live.shape}: edits during the run: ${history.touched.length} touched${live.tied ? ' (tied)' : ''}, ${history.added.length} added, ${history.deleted.length} deleted`,
  );
  ended('raced incremental run', raced.record);
  const quiet = await run(trial, 'incremental', false);
  ended('quiet incremental run', quiet.record);
  const stored = await compareWithTruth(env.deps, sourceId, fake, storeShape);
  if (stored.missing.length > 0)
    fail(
      INVARIANT.lost,
      'after a raced and a quiet incremental run',
      `${stored.missing.length}: ${some(stored.missing)}`,
    );
  if (stored.stale.length > 0)
    fail(
      INVARIANT.older,
      'after a raced and a quiet incremental run',
      `${stored.stale.length}: ${some(stored.stale)}`,
    );

  if (live.reconcile) {
    fake.control.setLive(edits);
    const racedReconciliation = await run(trial, 'reconciliation', false);
    fake.control.setLive(null);
    ended('raced reconciliation', racedReconciliation.record);
    const afterRace = await compareWithTruth(env.deps, sourceId, fake, storeShape);
    if (afterRace.wronglyTombstoned.length > 0)
      fail('no live entity tombstoned', 'raced reconciliation', some(afterRace.wronglyTombstoned));
    await run(trial, 'incremental', false);
    const quietReconciliation = await run(trial, 'reconciliation', false);
    ended('quiet reconciliation', quietReconciliation.record);
    const final = await compareWithTruth(env.deps, sourceId, fake, storeShape);
    if (final.wronglyTombstoned.length > 0 || final.notTombstoned.length > 0)
      fail(
        'exactly the deleted tombstoned',
        'quiet reconciliation',
        `live tombstoned: ${some(final.wronglyTombstoned)}; deleted not tombstoned: ${some(final.notTombstoned)}`,
      );
  }
  const source = await env.deps.sources.require(sourceId);
  if (source.activeRunId !== null) fail(INVARIANT.lock, 'live trial', `locked by ${source.activeRunId}`);
  return violations;
}

function config(trial: Trial): Record<string, unknown> {
  const { fake, plan } = trial;
  switch (plan.live?.shape) {
    case 'github':
      return { owner: 'chaos', repo: 'live', baseUrl: fake.url, perPage: Math.min(plan.pageSize, 100) };
    case 'gitlab':
      return { project: 'chaos/live', baseUrl: `${fake.url}/api/v4`, perPage: Math.min(plan.pageSize, 100) };
    case 'rest-page':
      return fakeRestConfig(fake.url, {
        url: `${fake.url}/records-paged`,
        pageSize: plan.pageSize,
        pagination: { type: 'page' },
      });
    default:
      // The source's cursor, not declared stable: the run keeps its own key.
      return fakeRestConfig(fake.url, {
        pageSize: plan.pageSize,
        pagination: { type: 'cursor', cursorParam: 'cursor', nextCursorPath: 'next_cursor' },
      });
  }
}
