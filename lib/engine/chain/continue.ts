import type { SyncRun } from '../../run/model.js';
import type { EngineDeps } from '../deps.js';
import { failOverBudget, finishSucceeded } from '../run/finish.js';
import { handOver, pageMessage } from './handoff.js';

/**
 * What follows the commit of page `page` of the run's own chain, whoever committed it (the page
 * step, or the drain continuing past a poison page): the run ends succeeded when the stream
 * ended (no cursor after the page), ends failed when the next page would pass the run's page
 * budget, and otherwise hands the next page to the queue.
 */
export async function continueRun(
  deps: EngineDeps,
  run: SyncRun,
  page: number,
  cursor: string | null,
  /** The watermark the page committed (a keyed stream's success moves the source's to it). */
  watermark: string | null,
): Promise<'finished' | 'enqueued' | 'over_budget'> {
  if (cursor === null) {
    await finishSucceeded(deps, run, watermark);
    return 'finished';
  }
  if (page + 1 > deps.limits.maxPagesPerRun) {
    await failOverBudget(deps, run);
    return 'over_budget';
  }
  await handOver(deps, pageMessage(run, page + 1, cursor));
  return 'enqueued';
}
