import { hasStablePosition } from '../../connectors/contract.js';
import type { SeenScope } from '../../store/seen-pages.js';
import type { StepContext } from '../step/context.js';

/**
 * A reconciliation listing's "seen" bookkeeping: every page records the ids it listed — one write
 * per page, whatever became of each entity (written, skipped unchanged, kept newer, too large,
 * invalid) — and the tombstone pass reads them back by key range (lib/store/seen-index.ts). Marks
 * on the items themselves would cost a write per entity on every reconciliation.
 */

/** The seen records of the step's chain at the run's epoch: a fenced epoch's records are another set. */
export function seenScope(context: Pick<StepContext, 'run' | 'message'>): SeenScope {
  const { run, message } = context;
  const chain = message.partition === undefined ? 'run' : `p${message.partition}`;
  return { runId: run.runId, epoch: run.epoch, chain };
}

/**
 * Records the ids a reconciliation page listed. Nothing for other modes, nor over a stream that is
 * not stable: such a reconciliation has no tombstone pass to read them (see `tombstone-cursor.ts`).
 */
export async function recordListed(context: StepContext, ids: readonly string[]): Promise<void> {
  const { deps, run, message } = context;
  if (run.mode !== 'reconciliation') return;
  if (!hasStablePosition(context.connector.manifestFor(context.config))) return;
  await deps.seen.pages.put(seenScope(context), message.page, ids, deps.clock.now());
}
