/**
 * The engine's face: the one path by which code outside lib/engine reaches it (the Lambda
 * handlers, the admin API, the local runtime, the benchmark). Inside, the engine is grouped by
 * phase — `run/` (start, scheduled start, restart, finish), `step/` (one page message from receipt
 * to result), `work/` (what a step does, by mode: pages, dead-letter retry, the tombstone pass),
 * `chain/` (hand-off, deferral, partition planning and continuation), `reaper/`, `dead-letters/`
 * and `sources/` (secrets, trusted configs, the rate budget). See docs/design.md.
 */

export {
  createEngineDeps,
  type EngineOptions,
  type EngineQueues,
  LOCAL_SCHEDULER_ROLE_ARN,
} from './create-deps.js';
export { type DrainResult, drainDeadMessage, UNKNOWN_SOURCE } from './dead-letters/drain.js';
export {
  type Clock,
  type ConnectorLookup,
  type EngineDeps,
  type EngineHooks,
  SimulatedCrashError,
  STEP_POINTS,
  type StepPoint,
} from './deps.js';
export { type ReapOutcome, type ReapReport, reap } from './reaper/reaper.js';
export { RUN_EVENT_TYPES, runEventDetail } from './run/events.js';
export { type ScheduledStartOutcome, startScheduledRun } from './run/scheduled-start.js';
export { type StartRunInput, startRun } from './run/start-run.js';
export { tell, tellEnded } from './run/story.js';
export { connectorSecrets, sourceSecretOrigins } from './sources/bound-secrets.js';
export { RateBudgetWaitError, spendingFetch } from './sources/rate-budget.js';
export { createSecretResolver, SECRET_CACHE_TTL_MS } from './sources/secrets.js';
export type { StepResult } from './step/context.js';
export { failedRecordLog, handlePageRecord } from './step/page-batch.js';
export { processPage } from './step/page-step.js';
