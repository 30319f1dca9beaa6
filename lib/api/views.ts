import type { z } from 'zod';
import { scheduleName } from '../queue/source-schedules.js';
import type { SyncRun } from '../run/model.js';
import type { DeadLetter } from '../store/dead-letters.js';
import type { SourceRecord } from '../store/sources.js';
import { iso } from './schemas/common.js';
import type { DeadLetterViewSchema } from './schemas/dead-letters.js';
import type { RunView } from './schemas/runs.js';
import type { SourceViewSchema } from './schemas/sources.js';

/**
 * Store records as the API shows them: ISO timestamps, derived fields an operator would
 * otherwise compute by hand (summary, heartbeat age), nothing internal (lock shard, params).
 */

/** "1990/2000 processed, 10 in DLQ" (or "1990 processed, …" while the total is unknown). */
export function runSummary(run: Pick<SyncRun, 'progress' | 'errorCount'>): string {
  const { processed, total } = run.progress;
  return `${total === null ? processed : `${processed}/${total}`} processed, ${run.errorCount} in DLQ`;
}

/** The run view of the API (schema `Run`). */
export function toRunView(run: SyncRun, now: number): RunView {
  return {
    runId: run.runId,
    sourceId: run.sourceId,
    mode: run.mode,
    state: run.state,
    progress: { ...run.progress },
    errorCount: run.errorCount,
    summary: runSummary(run),
    heartbeatAt: iso(run.heartbeatAt)!,
    heartbeatAgeSeconds: Math.max(0, Math.floor((now - run.heartbeatAt) / 1_000)),
    checkpoint: run.checkpoint ? { ...run.checkpoint, at: iso(run.checkpoint.at)! } : null,
    resume: { ...run.resume, at: iso(run.resume.at)! },
    failure: run.failure ? { reason: run.failure.reason, message: run.failure.message } : null,
    epoch: run.epoch,
    nextPage: run.nextPage,
    restarts: run.restarts,
    deferredUntil: iso(run.deferredUntil),
    // A confirmed handoff: the page is in the queue's care (a deferred one from its wake-up on).
    waitingSince:
      run.handoff?.sentAt != null ? iso(Math.max(run.handoff.sentAt, run.deferredUntil ?? 0)) : null,
    createdAt: iso(run.createdAt)!,
    startedAt: iso(run.startedAt),
    finishedAt: iso(run.finishedAt),
    updatedAt: iso(run.updatedAt)!,
  };
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
    createdAt: iso(source.createdAt)!,
    updatedAt: iso(source.updatedAt)!,
  };
}

/** The dead-letter view of the API (schema `DeadLetter`). */
export function toDeadLetterView(entry: DeadLetter): z.infer<typeof DeadLetterViewSchema> {
  return {
    sourceId: entry.sourceId,
    entryId: entry.entryId,
    kind: entry.kind,
    ref: entry.ref,
    errorClass: entry.errorClass,
    reason: entry.reason,
    attempts: entry.attempts,
    firstFailedAt: iso(entry.firstFailedAt)!,
    lastFailedAt: iso(entry.lastFailedAt)!,
    runId: entry.runId,
    page: entry.page,
    excerpt: entry.excerpt ?? null,
  };
}
