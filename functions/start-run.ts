/**
 * The target of every source schedule (EventBridge Scheduler invokes it with `{sourceId, mode}`).
 * Starts the run; a source that is busy (or gone) is logged and skipped, not an error, so
 * Scheduler does not retry into the same lock. Anything else fails the invocation and Scheduler
 * retries it with its own policy.
 */
import { type ScheduledStartOutcome, startScheduledRun } from '../lib/engine/index.js';
import { annotateWork, observed } from './shared/observed.js';
import { lambdaRuntime } from './shared/runtime.js';

const { engine: deps, observability } = lambdaRuntime();

export const handler = observed(observability, async (event: unknown): Promise<ScheduledStartOutcome> => {
  const sourceId = (event as { sourceId?: unknown } | null)?.sourceId;
  annotateWork(observability.tracer, typeof sourceId === 'string' ? { sourceId } : {});
  const outcome = await startScheduledRun(deps, event);
  if (outcome.started) annotateWork(observability.tracer, { runId: outcome.runId });
  return outcome;
});
