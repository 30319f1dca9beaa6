import middy from '@middy/core';
import { lambdaEngine, reap } from '../lib/engine/index.js';

const deps = lambdaEngine();

/** Reaper: invoked every minute by EventBridge Scheduler; resumes, restarts or fails silent runs. */
export const handler = middy(async () => {
  try {
    const report = await reap(deps);
    deps.logger.info('reaper pass', { examined: report.examined, actions: report.actions });
    return report;
  } finally {
    deps.metrics.flush();
  }
});
