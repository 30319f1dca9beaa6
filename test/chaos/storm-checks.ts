import { RELIABILITY } from '../../lib/config/constants.js';
import type { RunMode } from '../../lib/run/model.js';
import { lastProgressAt } from '../../lib/run/silence.js';
import { INVARIANT, waitForEmptyDlq } from './invariants.js';
import { pauseViolation } from './pauses.js';
import { BUDGET_HOURS, pageAfter } from './storm.js';
import type { RunRecord } from './supervisor.js';
import type { Trial } from './trial-faults.js';

type SupervisedRun = (
  trial: Trial,
  mode: RunMode,
  faulty: boolean,
) => Promise<{ record: RunRecord; stallFaults: number }>;

/**
 * The invariants of a full run that met an endless 429 storm: it ends `failed /
 * source_unavailable` within the 6 h progress budget, without a restart the storm caused, its
 * source released and the page it could not fetch filed with its cursor; once the source is back,
 * retry-failed fetches exactly that page and stores its valid entities at their current version.
 */
export async function checkEndlessStorm(
  trial: Trial,
  record: RunRecord,
  stallFaults: number,
  supervisedRun: SupervisedRun,
): Promise<string[]> {
  const { env, fake, plan } = trial;
  const violations: string[] = [];
  const fail = (invariant: string, detail: string) =>
    violations.push(`[${invariant}] run under an endless 429 storm: ${detail}`);
  const { run, reaps } = record;

  if (record.timedOut) fail(INVARIANT.ended, `still ${run.state} after the deadline, page ${run.nextPage}`);
  if (run.state !== 'failed' || run.failure?.reason !== 'source_unavailable')
    fail(
      INVARIANT.ended,
      `ended ${run.state} ${JSON.stringify(run.failure)}, expected failed / source_unavailable`,
    );
  const quiet = (run.finishedAt ?? Number.POSITIVE_INFINITY) - lastProgressAt(run);
  if (quiet > RELIABILITY.progressBudgetMs)
    fail(
      INVARIANT.ended,
      `failed ${Math.round(quiet / 60_000)} min after its last progress (budget ${BUDGET_HOURS} h)`,
    );
  if (reaps.length > stallFaults)
    fail(
      INVARIANT.stall,
      `${reaps.length} reaper restarts, but only ${stallFaults} crashes/kills could stall it`,
    );
  if (run.restarts !== reaps.length || run.epoch !== reaps.length + 1)
    fail(
      INVARIANT.ended,
      `epoch ${run.epoch} and ${run.restarts} restarts after ${reaps.length} reaper actions`,
    );
  const paused = pauseViolation(record.pauses);
  if (paused) fail(INVARIANT.stall, paused);

  const source = await env.deps.sources.require(trial.sourceId);
  if (source.activeRunId !== null) fail(INVARIANT.lock, `source still locked by ${source.activeRunId}`);
  const pages = (await env.deps.deadLetters.listAll(trial.sourceId)).filter((e) => e.kind === 'page');
  const [entry] = pages;
  if (pages.length !== 1 || entry?.runId !== run.runId) {
    fail(
      INVARIANT.counts,
      `page dead letters ${JSON.stringify(pages.map((e) => [e.ref, e.runId]))}, expected the failed page of ${run.runId}`,
    );
    return violations;
  }

  // The source recovers; retry-failed fetches the page the run could not.
  const expected = pageAfter(fake, entry.ref, plan.pageSize);
  const broken = new Set(fake.truth().invalidIds);
  const valid = expected.filter((e) => !broken.has(e.id));
  const retry = await supervisedRun(trial, 'dlq_retry', false);
  const retried = retry.record.run;
  if (retried.state !== 'succeeded')
    fail(INVARIANT.ended, `retry-failed ended ${retried.state}: ${JSON.stringify(retried.failure)}`);
  if (retried.progress.processed !== valid.length)
    fail(
      INVARIANT.counts,
      `retry-failed processed ${retried.progress.processed}, the failed page holds ${valid.length} valid entities`,
    );
  const still = (await env.deps.deadLetters.listAll(trial.sourceId)).filter((e) => e.kind === 'page');
  if (still.length > 0)
    fail(
      INVARIANT.counts,
      `page dead letters still open after retry-failed: ${still.map((e) => e.ref).join(', ')}`,
    );
  const missing: string[] = [];
  for (const entity of valid) {
    const item = await env.deps.items.get(trial.sourceId, entity.id);
    if (item?.version !== entity.updatedAt) missing.push(`${entity.id} (${item?.version ?? 'absent'})`);
  }
  if (missing.length > 0)
    fail(
      INVARIANT.lost,
      `entities of the failed page not stored at their version: ${missing.slice(0, 8).join(', ')}`,
    );
  if ((await env.deps.sources.require(trial.sourceId)).activeRunId !== null)
    fail(INVARIANT.lock, 'source still locked after retry-failed');
  const dlq = await waitForEmptyDlq(env);
  if (dlq !== null) fail(INVARIANT.pageDlq, `page DLQ holds ${JSON.stringify(dlq)}`);
  trial.log(
    `retry-failed after the storm: ${retried.state}, processed ${retried.progress.processed} of the failed page's ${valid.length} valid entities`,
  );
  return violations;
}
