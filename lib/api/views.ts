import type { z } from 'zod';
import { redactCursor, redactUrlsIn } from '../connectors/redact-url.js';
import type { EngineDeps } from '../engine/index.js';
import { parseJson } from '../json/lossless.js';
import { scheduleName } from '../queue/source-schedules.js';
import { humanDuration } from '../run/duration.js';
import { isTerminal, type Partition, type ResumeVerdict, type SyncRun } from '../run/model.js';
import { runParams } from '../run/params.js';
import { partitionsOf } from '../run/partitions.js';
import { type DeadLetter, EXCERPT_MAX_CHARS, isOpen } from '../store/dead-letters.js';
import type { SourceRecord } from '../store/sources.js';
import type { RequestContextInfo } from './response.js';
import { outcomeFigures, runSummary } from './run-summary.js';
import { iso } from './schemas/common.js';
import type { DeadLetterDetailSchema, DeadLetterViewSchema } from './schemas/dead-letters.js';
import type { PartitionView, RunView } from './schemas/runs.js';
import type { SourceViewSchema } from './schemas/sources.js';

/**
 * Store records as the API shows them: ISO timestamps, derived fields an operator would
 * otherwise compute by hand (summary, heartbeat age), nothing internal (lock shard, params).
 */

export { humanDuration, runSummary };

/** The resume verdicts in plain words, as a run view and the CLI show them. */
export const VERDICT_WORDS: Record<ResumeVerdict, string> = {
  fresh_start: 'started from the first page',
  resumed: 'resumed from its last checkpoint after its worker went silent',
  checkpoint_stale: 'restarted from the first page: its checkpoint was older than 6 hours',
  params_changed: 'restarted from the first page: the source was reconfigured',
  mode_not_resumable: 'restarted from the first page: this mode never resumes',
  stream_unordered:
    'restarted from the first page: the stream is not ordered, so a checkpoint cannot be trusted',
  no_checkpoint: 'restarted from the first page: no page had been committed yet',
  restart_limit: 'stopped: its worker crashed too many times',
};

/**
 * The run view of the API (schema `Run`). `openDeadLetters` is the run's live K: open entries
 * whose last failure was in this run (see {@link runView}); an ended run's `outcome` holds the
 * figures fixed when it ended, which its summary speaks from.
 */
export function toRunView(run: SyncRun, now: number, openDeadLetters = 0): RunView {
  const running = run.state === 'running';
  // Reconciliation runs always say how many they tombstoned (0 until one is); others never do.
  const tombstoned = run.mode === 'reconciliation' ? (run.progress.tombstoned ?? 0) : undefined;
  // A partitioned run's workers beat on their partitions: its last sign of life is the latest of them.
  const beat = partitionsOf(run).reduce((latest, p) => Math.max(latest, p.heartbeatAt), run.heartbeatAt);
  return {
    runId: run.runId,
    sourceId: run.sourceId,
    mode: run.mode,
    state: run.state,
    trigger: run.trigger,
    progress: {
      processed: run.progress.processed,
      total: run.progress.total,
      totalIsEstimate: run.progress.total !== null && !isTerminal(run.state),
      pages: run.progress.pages,
      ...(run.progress.ahead ? { ahead: run.progress.ahead } : {}),
    },
    errorCount: run.errorCount,
    openDeadLetters,
    outcome: outcomeFigures(run, openDeadLetters),
    ...(typeof tombstoned === 'number' ? { tombstoned } : {}),
    summary: runSummary({ ...run, tombstoned: tombstoned ?? null }, openDeadLetters),
    verdict: VERDICT_WORDS[run.resume.reason] ?? run.resume.reason,
    durationSeconds:
      run.startedAt === null
        ? null
        : Math.max(0, Math.floor(((run.finishedAt ?? now) - run.startedAt) / 1_000)),
    heartbeatAt: running ? iso(beat) : null,
    heartbeatAgeSeconds: running ? Math.max(0, Math.floor((now - beat) / 1_000)) : null,
    checkpoint: run.checkpoint
      ? {
          ...run.checkpoint,
          // The engine keeps the source's cursor as sent; what is shown loses its credentials.
          cursor: run.checkpoint.cursor === null ? null : redactCursor(run.checkpoint.cursor),
          at: iso(run.checkpoint.at)!,
        }
      : null,
    resume: { ...run.resume, at: iso(run.resume.at)! },
    failure: run.failure ? { reason: run.failure.reason, message: run.failure.message } : null,
    epoch: run.epoch,
    nextPage: run.nextPage,
    restarts: run.restarts,
    deferredUntil: iso(run.deferredUntil),
    // A confirmed handoff: the page is in the queue's care (a deferred one from its wake-up on).
    waitingSince:
      run.handoff?.sentAt != null ? iso(Math.max(run.handoff.sentAt, run.deferredUntil ?? 0)) : null,
    ...(run.partitions ? { partitions: partitionsOf(run).map((p) => toPartitionView(p, running)) } : {}),
    ...(run.completeness ? { completeness: run.completeness } : {}),
    ...(runParams(run).deadLetterFilter ? { deadLetterFilter: runParams(run).deadLetterFilter } : {}),
    createdAt: iso(run.createdAt)!,
    startedAt: iso(run.startedAt),
    finishedAt: iso(run.finishedAt),
    updatedAt: iso(run.updatedAt)!,
  };
}

/** One partition as the run view lists it (schema `Partition`). */
export function toPartitionView(partition: Partition, runRunning: boolean): PartitionView {
  const running = runRunning && partition.state === 'running';
  const handoff = partition.handoff;
  return {
    index: partition.index,
    window: { from: partition.window.from, until: partition.window.until },
    state: partition.state,
    processed: partition.processed,
    pages: partition.pages,
    errorCount: partition.errorCount,
    nextPage: partition.nextPage,
    checkpoint: partition.checkpoint
      ? {
          page: partition.checkpoint.page,
          watermark: partition.checkpoint.watermark,
          at: iso(partition.checkpoint.at)!,
        }
      : null,
    heartbeatAt: running ? iso(partition.heartbeatAt) : null,
    deferredUntil: running ? iso(partition.deferredUntil) : null,
    waitingSince:
      running && handoff?.sentAt != null ? iso(Math.max(handoff.sentAt, partition.deferredUntil ?? 0)) : null,
    tailFrom: partition.tailFrom,
  };
}

/** A run's view with its live dead-letter count (one query on the by-run index). */
export async function runView(
  deps: Pick<EngineDeps, 'deadLetters' | 'clock'>,
  run: SyncRun,
): Promise<RunView> {
  const open = await deps.deadLetters.countOpen(run.sourceId, run.runId);
  return toRunView(run, deps.clock.now(), open);
}

/** User-Agent prefix of the harvester CLI: runs it starts show the trigger `cli`. */
export const CLI_USER_AGENT = 'harvester-cli/';

/** Who started a run through the API: the CLI (by its User-Agent) or a direct call. */
export function triggerOf(request: Pick<RequestContextInfo, 'userAgent'>): 'api' | 'cli' {
  return request.userAgent?.startsWith(CLI_USER_AGENT) ? 'cli' : 'api';
}

/** The source view of the API (schema `Source`). */
export function toSourceView(source: SourceRecord): z.infer<typeof SourceViewSchema> {
  return {
    sourceId: source.sourceId,
    connector: source.connector,
    config: source.config,
    schedules: source.schedules.map((s, index) => ({
      name: scheduleName(source.sourceId, index),
      expression: s.expression,
      mode: s.mode,
    })),
    configHash: source.configHash,
    watermark: source.watermark,
    activeRunId: source.activeRunId,
    paused: source.pausedAt !== null,
    pausedAt: iso(source.pausedAt),
    createdAt: iso(source.createdAt)!,
    updatedAt: iso(source.updatedAt)!,
  };
}

/** The dead-letter view of the API (schema `DeadLetter`). */
export function toDeadLetterView(entry: DeadLetter): z.infer<typeof DeadLetterViewSchema> {
  return {
    sourceId: entry.sourceId,
    // Page refs are source cursors: shown without the credentials a source may have put in them.
    entryId: `${entry.kind}#${redactCursor(entry.entryId.slice(entry.kind.length + 1))}`,
    kind: entry.kind,
    ref: redactCursor(entry.ref),
    errorClass: entry.errorClass,
    reason: entry.reason,
    attempts: entry.attempts,
    firstFailedAt: iso(entry.firstFailedAt)!,
    lastFailedAt: iso(entry.lastFailedAt)!,
    runId: entry.runId,
    page: entry.page,
    excerpt: entry.excerpt ? redactUrlsIn(entry.excerpt) : null,
    state: isOpen(entry) ? 'open' : 'discarded',
    discard: entry.discard
      ? { at: iso(entry.discard.at)!, by: entry.discard.by, reason: entry.discard.reason }
      : null,
  };
}

type DeadLetterEvent = z.infer<typeof DeadLetterDetailSchema>['history'][number];

/**
 * One dead letter in full (schema `DeadLetterDetail`): the listing's view, its state and last
 * discard, the kept payload parsed losslessly (when it was kept whole), and its history.
 */
export function toDeadLetterDetail(entry: DeadLetter): z.infer<typeof DeadLetterDetailSchema> {
  const view = toDeadLetterView(entry);
  const { discard } = view;
  const history: DeadLetterEvent[] = [{ at: view.firstFailedAt, event: 'first_failure' }];
  if (entry.lastFailedAt !== entry.firstFailedAt || entry.discard)
    history.push({ at: view.lastFailedAt, event: 'last_failure', runId: entry.runId, page: entry.page });
  else history[0] = { ...history[0]!, runId: entry.runId, page: entry.page };
  if (discard) history.push({ at: discard.at, event: 'discarded', by: discard.by, reason: discard.reason });
  history.sort((a, b) => a.at.localeCompare(b.at));
  return {
    ...view,
    record: recordOf(view.excerpt),
    history,
  };
}

/** The kept payload as JSON, exact numbers and all; null when it was cut short or is not JSON. */
function recordOf(excerpt: string | null): unknown {
  // An excerpt at the limit ends in "…": a cut record is shown as text only, never half-parsed.
  if (excerpt === null || excerpt.length > EXCERPT_MAX_CHARS) return null;
  try {
    return parseJson(excerpt);
  } catch {
    return null;
  }
}

/** Where a run is read: under its source, the path a source owner's IAM policy covers. */
export function runLocation(run: Pick<SyncRun, 'sourceId' | 'runId'>): string {
  return `/sources/${encodeURIComponent(run.sourceId)}/runs/${encodeURIComponent(run.runId)}`;
}
