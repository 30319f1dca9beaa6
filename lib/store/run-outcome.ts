import type { RunOutcome, SyncRun } from '../run/model.js';
import { chainName, type StoredChain } from './chain-item.js';

/*
 * The outcome a run ends with (see `RunOutcome`): built from the run as read just before the
 * write that ends it, and written by that write, conditioned on nothing it was built from having
 * moved since (the run's epoch, each chain's next page). The write that ends a run is the last
 * one a run's counts see — every chain write is refused once the run ended — so the figures are
 * final: no later read ever computes them again.
 */

/**
 * The run's outcome, from the run and its chains as read, and `deadLetters`, the entries whose
 * last failure was this run (`DeadLetterStore.countFiledBy`, read before the end).
 *
 * Why dead letters are counted in the table at the end rather than as they are filed: under
 * at-least-once delivery a page may file its entries twice (a delivery that crashed before its
 * commit, then the redelivery), and only the delivery whose commit wins may count; a redelivery
 * cannot tell whether the first one filed an entry anew or found it already this run's. And the
 * page that fails a run (a dead-lettered page with no computable next cursor) never commits at
 * all. The table, read strongly consistent at the end, knows each entry once whatever delivered
 * it, and counting it again (the end's transaction going again) gives the same number: while the
 * run holds its source's lock, no other run can file, take over or resolve its entries.
 */
export function outcomeOf(run: SyncRun, chains: readonly StoredChain[], deadLetters: number): RunOutcome {
  const own = chains.find((c) => c.partition === undefined);
  return {
    processed: run.progress.processed,
    failed: run.errorCount,
    deadLetters,
    total: own?.statedTotal ?? null,
  };
}

/** What the end adds to the run item's update: the outcome, and on success the total it keeps. */
export function outcomeUpdate(
  run: SyncRun,
  outcome: RunOutcome,
  succeeded: boolean,
): { set: string; condition: string; names: Record<string, string>; values: Record<string, unknown> } {
  return {
    // A run that read its whole stream keeps the total the source stated; only an estimate (or
    // none) gives way to what it counted.
    set: `, outcome = :outcome${succeeded ? ', #progress.#total = :endTotal' : ''}`,
    condition: ' AND epoch = :readEpoch',
    names: succeeded ? { '#progress': 'progress', '#total': 'total' } : {},
    values: {
      ':outcome': outcome,
      ':readEpoch': run.epoch,
      ...(succeeded ? { ':endTotal': outcome.total ?? run.progress.processed } : {}),
    },
  };
}

/** `update` (a `SET …` expression, perhaps with a `REMOVE` clause) with `sets` (`, a = :a…`) added to its SET clause. */
export function withSets(update: string, sets: string): string {
  const remove = update.indexOf(' REMOVE ');
  return remove === -1 ? `${update}${sets}` : `${update.slice(0, remove)}${sets}${update.slice(remove)}`;
}

/** Each chain's next page as read, by chain name: the end is refused if a commit moved one since. */
export function chainPositions(chains: readonly StoredChain[]): Map<string, number> {
  return new Map(chains.map((c) => [chainName(c.partition), c.nextPage]));
}
