import type { PageMessage } from '../../queue/page-message.js';
import { chainAt } from '../../run/chains.js';
import type { SyncRun } from '../../run/model.js';

/** Why a page message is acknowledged without work. */
export const DROP_REASONS = [
  'run_not_found',
  'source_mismatch',
  'run_succeeded',
  'run_failed',
  'run_cancelled',
  'stale_epoch',
  'future_epoch',
  'duplicate_page',
  'page_out_of_order',
  /** A partition the run does not have (its plan was replaced by a restart from scratch). */
  'partition_unknown',
] as const;
export type DropReason = (typeof DROP_REASONS)[number];

/**
 * Decides whether a page message still names work to do. Pure: the conditional writes enforce
 * the same rules against races; this check only saves the fetch for messages that are
 * obviously stale (a redelivery, a zombie's successor, a cancelled run).
 */
export function dropReason(run: SyncRun | undefined, message: PageMessage): DropReason | undefined {
  const early = runDropReason(run, message);
  if (early || !run) return early ?? 'run_not_found';
  // A page is judged against its own chain: the run's, or its partition's.
  const chain = chainAt(run, message.partition);
  if (!chain) return run.nextPage > 1 ? 'partition_unknown' : 'page_out_of_order';
  if (message.page < chain.nextPage) return 'duplicate_page';
  if (message.page > chain.nextPage) return 'page_out_of_order';
  // The chain read to its end (a partition done or idle): nothing is due on it.
  if (chain.state !== 'running') return 'duplicate_page';
  return undefined;
}

/**
 * The part of {@link dropReason} the run item alone decides (the run, its source, its state and
 * epoch), before the page's chain is read: a page step reads its chain with its claim, whose
 * condition judges the page.
 */
export function runDropReason(
  run: Pick<SyncRun, 'sourceId' | 'state' | 'epoch'> | undefined,
  message: PageMessage,
): DropReason | undefined {
  if (!run) return 'run_not_found';
  if (run.sourceId !== message.sourceId) return 'source_mismatch';
  if (run.state === 'succeeded' || run.state === 'failed' || run.state === 'cancelled')
    return `run_${run.state}`;
  if (message.epoch < run.epoch) return 'stale_epoch';
  if (message.epoch > run.epoch) return 'future_epoch';
  return undefined;
}
