import { RELIABILITY } from '../../config/constants.js';
import { CURSOR_CYCLE, type CycleWatch, watchCursor } from '../../run/cursor-cycle.js';
import type { Checkpoint } from '../../run/model.js';
import { endRun } from '../run/finish.js';
import type { StepContext, StepResult } from '../step/context.js';

/*
 * Guards that make every chain end: a source whose cursors lead back to a page already read
 * (`run/cursor-cycle.ts`), and a listing whose computable next pages keep failing for good (a
 * page-number API that answers 400 past its last page, as WordPress does with
 * `rest_post_invalid_page_number`, or GitHub search's 422 past 1,000 results). Both would read
 * until the run's page budget; both end the run with the reason instead.
 */

/** The failure reason of a run whose computable next pages failed for good too many times in a row. */
export const PAGES_FAILING = 'pages_failing';

/** The chain's checkpoint when it is the commit just before this page (else a restart, or a first page). */
export function priorCheckpoint(context: StepContext): Checkpoint | null {
  const checkpoint = (context.partition ?? context.run).checkpoint;
  return checkpoint !== null && checkpoint.page === context.message.page - 1 ? checkpoint : null;
}

/** What the commit of this page keeps for the guards, or the cycle the page's next cursor closed. */
export function chainWatch(
  context: StepContext,
  next: string | null,
  failed: boolean,
): { cycle: true } | { cycle: false; extras: { cycle?: CycleWatch; failedInRow?: number } } {
  const prior = priorCheckpoint(context);
  const step = watchCursor(prior?.cycle, context.message.cursor, next);
  if (step.cycle) return { cycle: true };
  const failedInRow = failed ? (prior?.failedInRow ?? 0) + 1 : 0;
  return {
    cycle: false,
    extras: {
      ...(step.watch ? { cycle: step.watch } : {}),
      ...(failedInRow > 0 ? { failedInRow } : {}),
    },
  };
}

/** True when this page's permanent failure makes too many in a row on the chain. */
export function tooManyFailing(context: StepContext): boolean {
  return (priorCheckpoint(context)?.failedInRow ?? 0) + 1 >= RELIABILITY.pageFailuresInRow;
}

function chainName(context: StepContext): string {
  const { message } = context;
  return message.partition !== undefined ? `partition ${message.partition}` : 'the run';
}

/** Ends the run failed: the source's next cursor after this page was already followed. */
export async function failCursorCycle(context: StepContext): Promise<StepResult> {
  const { deps, run, message } = context;
  context.log.error('the source named a page already read as the next; the run ends failed');
  await endRun(deps, run, {
    epoch: run.epoch,
    state: 'failed',
    failure: {
      reason: CURSOR_CYCLE,
      message: `the source's next cursor after page ${message.page} of ${chainName(context)} leads back to a page already read: its pagination loops, so the run stopped instead of reading it forever`,
    },
  });
  return { outcome: 'failed', reason: CURSOR_CYCLE };
}

/** Ends the run failed: this page and the ones before it failed for good, skipped one after another. */
export async function failPagesInRow(context: StepContext, reason: string): Promise<StepResult> {
  const { deps, run, message } = context;
  const count = RELIABILITY.pageFailuresInRow;
  context.log.error('pages in a row failed for good; the run ends failed', { reason, count });
  await endRun(deps, run, {
    epoch: run.epoch,
    state: 'failed',
    failure: {
      reason: PAGES_FAILING,
      message: `${count} pages in a row of ${chainName(context)} failed for good (pages ${message.page - count + 1}–${message.page}, last: ${reason}); each is in the dead-letter queue. A page-number API that refuses pages past its last one does this: configure totalPath, or a next link, so the run knows where the listing ends`,
    },
  });
  return { outcome: 'failed', reason: PAGES_FAILING };
}
