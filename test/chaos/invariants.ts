import { RETRY_FIXED_NOTHING, type ResumeVerdict, type SyncRun } from '../../lib/run/model.js';
import { partitionsOf } from '../../lib/run/partitions.js';
import type { DeadLetter } from '../../lib/store/dead-letters.js';
import type { FakeSource } from '../../tools/fake-source/index.js';
import type { ChaosEnv } from './chaos-env.js';
import { pauseViolation } from './pauses.js';
import type { ChaosMode } from './plan.js';
import type { RunRecord } from './supervisor.js';
import { queueCounts } from './workers.js';

/** The invariants every trial checks, by name (a violation starts with its name). */
export const INVARIANT = {
  ended: 'every run terminal with a resume verdict',
  lock: 'no lock left held',
  lost: 'no entity lost',
  duplicated: 'none duplicated',
  older: 'no older version over a newer one',
  counts: 'counts exact',
  pageDlq: 'page DLQ empty',
  fenced: 'a fenced worker writes nothing',
  stall: 'no stall without a fault',
  watermark: 'watermark',
} as const;

/** What a correct run must have produced, computed from the fake source's ground truth. */
export interface Expected {
  readonly label: string;
  readonly mode: ChaosMode;
  readonly processed: number;
  readonly errorCount: number;
  /** full / incremental: dead_letters entries last written by this run (= errorCount). */
  readonly entriesOfRun?: number;
  /** dlq_retry: refs of the entries that must still be open, each last failed by this run (= errorCount). */
  readonly stillOpen?: ReadonlySet<string>;
  readonly pages?: number;
  /** A partitioned run: split into 2 to this many partitions, each done, their counts adding up to the run's. */
  readonly partitions?: number;
  readonly watermark: string | null;
  /** Crashes that fired and SIGKILLs done during the run: the only excuses for a stall. */
  readonly stallFaults: number;
}

const RESTART_VERDICTS: Record<ChaosMode, readonly ResumeVerdict[]> = {
  // A full run resumes where an incremental one does (a stable stream), else restarts.
  full: ['resumed', 'no_checkpoint', 'stream_unordered'],
  incremental: ['resumed', 'no_checkpoint'],
  dlq_retry: ['mode_not_resumable', 'no_checkpoint'],
  live: ['resumed', 'no_checkpoint', 'mode_not_resumable', 'stream_unordered'],
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const some = (ids: Iterable<string>) => [...ids].slice(0, 8).join(', ');

async function listRunEntries(env: ChaosEnv, sourceId: string, runId: string): Promise<DeadLetter[]> {
  // The by-run listing reads an index, which lags behind the run's last entries for a moment.
  await env.faults.settle();
  const all: DeadLetter[] = [];
  let cursor: string | undefined;
  do {
    const page = await env.deps.deadLetters.list(sourceId, {
      runId,
      limit: 500,
      ...(cursor ? { cursor } : {}),
    });
    all.push(...page.items);
    cursor = page.cursor;
  } while (cursor);
  return all;
}

/** A run whose successor waited in a backlogged queue must be judged waiting and never fenced. */
export function backlogViolation(record: RunRecord): string | null {
  const backlog = record.backlog;
  if (!backlog || (backlog.judgedWaiting && backlog.fenced === 0)) return null;
  return `its successor waited ${backlog.waitedMs} ms in the queue: the reaper ${backlog.judgedWaiting ? 'reported it waiting' : 'did not report it waiting'} and fenced it ${backlog.fenced} times`;
}

/** Checks one finished run against the ground truth; returns the violations, each prefixed by its invariant. */
export async function checkRun(
  env: ChaosEnv,
  fake: FakeSource,
  record: RunRecord,
  expected: Expected,
): Promise<string[]> {
  const violations: string[] = [];
  const fail = (invariant: string, detail: string) =>
    violations.push(`[${invariant}] ${expected.label}: ${detail}`);
  const { run, reaps } = record;
  const { sourceId } = run;

  // Ended, and explained.
  if (record.timedOut)
    fail(INVARIANT.ended, `still ${run.state} after 60 s at epoch ${run.epoch}, page ${run.nextPage}`);
  // A retry that fixed nothing ends failed and says so (engine/run/finish.ts); every other run succeeds.
  const fixedNothing = expected.mode === 'dlq_retry' && expected.processed === 0 && expected.errorCount > 0;
  if (fixedNothing ? run.failure?.reason !== RETRY_FIXED_NOTHING : run.state !== 'succeeded')
    fail(INVARIANT.ended, `ended ${run.state}: ${JSON.stringify(run.failure)}`);
  // A partitioned run resumes every unfinished partition from its own checkpoint, whatever its mode.
  const allowed = [...RESTART_VERDICTS[expected.mode], ...(expected.partitions ? ['resumed' as const] : [])];
  for (const reap of reaps) {
    if (!allowed.includes(reap.verdict as ResumeVerdict))
      fail(INVARIANT.ended, `reaper verdict ${reap.verdict} for a ${expected.mode} run`);
  }
  const verdict = reaps.length === 0 ? 'fresh_start' : reaps.at(-1)!.verdict;
  if (run.resume?.reason !== verdict)
    fail(INVARIANT.ended, `resume verdict ${run.resume?.reason}, expected ${verdict}`);
  if (run.restarts !== reaps.length || run.epoch !== reaps.length + 1) {
    fail(
      INVARIANT.ended,
      `epoch ${run.epoch} and ${run.restarts} restarts after ${reaps.length} reaper actions`,
    );
  }
  if (reaps.length > expected.stallFaults) {
    fail(
      INVARIANT.stall,
      `${reaps.length} reaper restarts, but only ${expected.stallFaults} crashes/kills could stall it`,
    );
  }

  const backlog = backlogViolation(record);
  if (backlog) fail(INVARIANT.stall, backlog);
  const paused = pauseViolation(record.pauses);
  if (paused) fail(INVARIANT.stall, paused);

  // The lock and the watermark.
  const source = await env.deps.sources.require(sourceId);
  if (source.activeRunId !== null) fail(INVARIANT.lock, `source still locked by ${source.activeRunId}`);
  if (source.watermark !== expected.watermark)
    fail(INVARIANT.watermark, `${source.watermark}, expected ${expected.watermark}`);

  // Items against the truth.
  const truth = fake.truth();
  const broken = new Set(truth.invalidIds);
  const want = new Map(truth.entities.filter((e) => !broken.has(e.id)).map((e) => [e.id, e.updatedAt]));
  const items = await env.deps.items.listAll(sourceId);
  const stored = new Map(items.map((i) => [i.entityId, i]));
  const lost = [...want.keys()].filter((id) => !stored.has(id));
  if (lost.length > 0) fail(INVARIANT.lost, `${lost.length} live valid entities not stored: ${some(lost)}`);
  if (stored.size !== items.length)
    fail(INVARIANT.duplicated, `${items.length} items for ${stored.size} ids`);
  const extra = items
    .filter((i) => !want.has(i.entityId) || i.tombstonedAt !== undefined)
    .map((i) => i.entityId);
  if (extra.length > 0)
    fail(INVARIANT.duplicated, `${extra.length} items that should not be there: ${some(extra)}`);
  const seen = env.seen.of(sourceId);
  const older = items.filter(
    (i) =>
      i.version < (seen.get(i.entityId) ?? '') ||
      (want.has(i.entityId) && i.version !== want.get(i.entityId)),
  );
  if (older.length > 0) {
    const detail = older
      .slice(0, 5)
      .map(
        (i) =>
          `${i.entityId} stored ${i.version}, saw ${seen.get(i.entityId)}, truth ${want.get(i.entityId)}`,
      );
    fail(INVARIANT.older, `${older.length} items: ${detail.join('; ')}`);
  }

  // Counts.
  if (run.progress.processed !== expected.processed)
    fail(INVARIANT.counts, `processed ${run.progress.processed}, expected ${expected.processed}`);
  if (run.errorCount !== expected.errorCount)
    fail(INVARIANT.counts, `errorCount ${run.errorCount}, expected ${expected.errorCount}`);
  if (expected.pages !== undefined && run.progress.pages !== expected.pages)
    fail(INVARIANT.counts, `pages ${run.progress.pages}, expected ${expected.pages}`);
  if (expected.partitions !== undefined) violations.push(...partitionViolations(run, expected));
  // The outcome its end fixed holds the run's own counts, whatever delivered its pages.
  if (run.outcome?.processed !== run.progress.processed || run.outcome?.failed !== run.errorCount)
    fail(
      INVARIANT.counts,
      `outcome ${JSON.stringify(run.outcome ?? null)}, counts ${run.progress.processed}/${run.errorCount}`,
    );
  if (expected.entriesOfRun !== undefined) {
    if (run.outcome?.deadLetters !== expected.entriesOfRun)
      fail(
        INVARIANT.counts,
        `outcome files ${run.outcome?.deadLetters} dead letters, expected ${expected.entriesOfRun}`,
      );
    const entries = await listRunEntries(env, sourceId, run.runId);
    if (entries.length !== expected.entriesOfRun || entries.length !== run.errorCount) {
      fail(
        INVARIANT.counts,
        `${entries.length} dead_letters entries of the run, errorCount ${run.errorCount}, expected ${expected.entriesOfRun}`,
      );
    }
  }
  const open = await env.deps.deadLetters.listAll(sourceId);
  if (expected.stillOpen !== undefined) {
    const refs = new Set(open.map((e) => e.ref));
    const missing = [...expected.stillOpen].filter((r) => !refs.has(r));
    const unexpected = [...refs].filter((r) => !expected.stillOpen!.has(r));
    if (missing.length + unexpected.length > 0)
      fail(INVARIANT.counts, `open entries: missing ${some(missing)}; unexpected ${some(unexpected)}`);
    if (run.errorCount !== open.length)
      fail(INVARIANT.counts, `errorCount ${run.errorCount}, ${open.length} entries still open`);
    const stale = open.filter((e) => e.runId !== run.runId).map((e) => e.ref);
    if (stale.length > 0) fail(INVARIANT.counts, `open entries not last failed by this run: ${some(stale)}`);
  }

  // Nothing went through the page DLQ.
  const pageEntries = open
    .filter((e) => e.kind === 'page')
    .map((e) => `${e.ref || '(first page)'}: ${e.reason}`);
  if (pageEntries.length > 0) fail(INVARIANT.pageDlq, `page dead letters: ${some(pageEntries)}`);
  const dlq = await waitForEmptyDlq(env);
  if (dlq !== null) fail(INVARIANT.pageDlq, `page DLQ holds ${JSON.stringify(dlq)}`);

  // The zombie.
  if (record.zombie) {
    const { result, fencedBeforeThaw, epoch } = record.zombie;
    const stoppedFenced = result.outcome === 'stopped' && result.reason === 'RunFencedError';
    if (fencedBeforeThaw && !stoppedFenced)
      fail(INVARIANT.fenced, `zombie of epoch ${epoch} fenced, then ${JSON.stringify(result)}`);
    if (['error', 'hung'].includes(result.outcome))
      fail(INVARIANT.fenced, `zombie of epoch ${epoch}: ${JSON.stringify(result)}`);
  }
  return violations;
}

/** A partitioned run: split as asked, every partition done, and the run's counts the sums of its partitions'. */
export function partitionViolations(
  run: SyncRun,
  expected: Pick<Expected, 'label' | 'partitions'>,
): string[] {
  const partitions = partitionsOf(run);
  const violations: string[] = [];
  const fail = (detail: string) => violations.push(`[${INVARIANT.counts}] ${expected.label}: ${detail}`);
  if (partitions.length < 2 || partitions.length > (expected.partitions ?? 0))
    fail(`${partitions.length} partitions, expected 2–${expected.partitions}`);
  const open = partitions.filter((p) => p.state !== 'done').map((p) => `#${p.index} ${p.state}`);
  if (run.state === 'succeeded' && open.length > 0)
    fail(`succeeded with partitions not done: ${open.join(', ')}`);
  const sum = (f: (p: (typeof partitions)[number]) => number) => partitions.reduce((n, p) => n + f(p), 0);
  if (sum((p) => p.processed) !== run.progress.processed)
    fail(`partitions processed ${sum((p) => p.processed)}, the run ${run.progress.processed}`);
  if (sum((p) => p.pages) !== run.progress.pages)
    fail(`partitions committed ${sum((p) => p.pages)} pages, the run ${run.progress.pages}`);
  if (sum((p) => p.errorCount) !== run.errorCount)
    fail(`partitions counted ${sum((p) => p.errorCount)} errors, the run ${run.errorCount}`);
  return violations;
}

/** Waits a few seconds for the page DLQ to drain; what it still holds then, or null. */
export async function waitForEmptyDlq(env: ChaosEnv): Promise<object | null> {
  const { sqs } = env.engine.aws.clients;
  let counts = await queueCounts(sqs, env.engine.aws.resources.pageDlqUrl);
  for (let i = 0; i < 10 && counts.visible + counts.notVisible + counts.delayed > 0; i++) {
    await sleep(300);
    counts = await queueCounts(sqs, env.engine.aws.resources.pageDlqUrl);
  }
  return counts.visible + counts.notVisible + counts.delayed > 0 ? counts : null;
}
