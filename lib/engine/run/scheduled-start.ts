import { z } from 'zod';
import { RUN_MODES } from '../../run/model.js';
import { SourceBusyError, SourceNotFoundError } from '../../store/errors.js';
import type { FiringRecord } from '../../store/schedule-firings.js';
import type { EngineDeps } from '../deps.js';
import { startRun } from './start-run.js';

/*
 * The start-run target of a source's recurring schedules (lib/queue/source-schedules.ts writes
 * the schedules; this is what they invoke): the Lambda handler and the local runtime's
 * Scheduler firing both call it.
 */

/** Input a recurring source schedule sends to the start-run target. */
export const ScheduledStartSchema = z.object({
  sourceId: z.string().min(1),
  mode: z.enum(RUN_MODES),
  /** The schedule's name, so the run shows `schedule:<name>` as its trigger (absent on older schedules). */
  schedule: z.string().min(1).max(64).optional(),
  /**
   * The firing's scheduled time (Scheduler's `<aws.scheduler.scheduled-time>`): every delivery of
   * one firing carries the same, so a second delivery is recognised. Absent on older schedules.
   */
  scheduledTime: z.iso.datetime().optional(),
  /** This invocation's id (`<aws.scheduler.execution-id>`), for the logs. */
  executionId: z.string().min(1).max(128).optional(),
});

/** What one firing of a source schedule did. */
export type ScheduledStartOutcome =
  | { readonly started: true; readonly runId: string }
  | { readonly started: false; readonly reason: 'source_busy'; readonly activeRunId: string }
  | { readonly started: false; readonly reason: 'source_not_found' }
  /** Scheduler delivered this firing again (at-least-once): it already had its start. */
  | { readonly started: false; readonly reason: 'duplicate_firing'; readonly scheduledTime: string }
  | { readonly started: false; readonly reason: 'invalid_input'; readonly message: string };

/**
 * The start-run target of a source schedule: starts a run of `{sourceId, mode}`. A busy source
 * is skipped, not an error: the active run already covers the schedule's purpose, and failing
 * would only make Scheduler retry into the same lock. A schedule outliving its source (deleted
 * between the source and its schedules) is skipped too, and so is an input that is not
 * `{sourceId, mode}` (logged as an error: retrying cannot fix it). A firing delivered again
 * (same schedule and scheduled time; Scheduler delivers at least once) is dropped, however long
 * after the first. Anything else throws, so Scheduler retries.
 */
export async function startScheduledRun(deps: EngineDeps, input: unknown): Promise<ScheduledStartOutcome> {
  const parsed = ScheduledStartSchema.safeParse(parseInput(input));
  if (!parsed.success) {
    const message = z.prettifyError(parsed.error);
    deps.logger.error('scheduled run skipped: the schedule input is not {sourceId, mode}', {
      problem: message,
    });
    return { started: false, reason: 'invalid_input', message };
  }
  const { schedule, scheduledTime, executionId, ...request } = parsed.data;
  const firing =
    schedule && scheduledTime ? { schedule, scheduledTime, at: Date.parse(scheduledTime) } : undefined;
  let recorded: FiringRecord | undefined;
  if (firing) {
    // Recorded before the start, in one conditional write, so two deliveries racing each other
    // cannot both pass; a crash between the two loses this firing, and the next one catches up.
    recorded = await deps.sources.firings.record(request.sourceId, firing.schedule, firing.at);
    if (recorded.outcome === 'duplicate') {
      deps.logger.info('scheduled run skipped: this firing was delivered before', {
        ...request,
        schedule,
        scheduledTime,
        executionId,
        lastFiredAt: new Date(recorded.last).toISOString(),
      });
      return { started: false, reason: 'duplicate_firing', scheduledTime: firing.scheduledTime };
    }
  }
  if (recorded?.outcome === 'source_not_found') return sourceGone(deps, request);
  try {
    const run = await startRun(deps, { ...request, trigger: `schedule:${schedule ?? 'unnamed'}` });
    return { started: true, runId: run.runId };
  } catch (error) {
    if (error instanceof SourceBusyError) {
      deps.logger.info('scheduled run skipped: the source has an active run', {
        ...request,
        activeRunId: error.activeRunId,
      });
      return { started: false, reason: 'source_busy', activeRunId: error.activeRunId };
    }
    if (error instanceof SourceNotFoundError) return sourceGone(deps, request);
    // Scheduler retries this firing: it must not find it recorded.
    if (firing && recorded?.outcome === 'recorded')
      await deps.sources.firings.forget(request.sourceId, firing.schedule, firing.at, recorded.previous);
    throw error;
  }
}

function sourceGone(deps: EngineDeps, request: { sourceId: string; mode: string }): ScheduledStartOutcome {
  deps.logger.warn('scheduled run skipped: the source no longer exists', request);
  return { started: false, reason: 'source_not_found' };
}

function parseInput(input: unknown): unknown {
  if (typeof input !== 'string') return input;
  try {
    return JSON.parse(input);
  } catch {
    return input;
  }
}
