import { ulid } from 'ulid';
import type { NewRun } from '../../lib/store/sync-runs.js';

/**
 * A new run as `createHoldingLock` takes it, with the defaults most tests want: a full run, created
 * now from scratch, with placeholder params and hash (a run the reaper should see as reconfigured
 * must say so through `paramsHash`). Only the source is required.
 *
 * @example
 * const run = await deps.lifecycle.createHoldingLock(newRun({ sourceId, mode: 'dlq_retry' }));
 */
export function newRun(overrides: Partial<NewRun> & Pick<NewRun, 'sourceId'>): NewRun {
  const now = overrides.now ?? Date.now();
  return {
    runId: ulid(now),
    mode: 'full',
    params: { since: null, scope: null, configHash: 'x' },
    paramsHash: 'x',
    resume: { reason: 'fresh_start', from: 'scratch', at: now },
    now,
    ...overrides,
  };
}
