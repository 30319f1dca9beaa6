import { reap } from '../lib/engine/index.js';
import { observed } from './shared/observed.js';
import { lambdaRuntime } from './shared/runtime.js';

const { engine: deps, observability } = lambdaRuntime();

/** Reaper: invoked every minute by EventBridge Scheduler; resumes, restarts or fails silent runs. */
export const handler = observed(observability, async () => {
  const report = await reap(deps);
  deps.logger.info('reaper pass', { examined: report.examined, actions: report.actions });
  return report;
});
