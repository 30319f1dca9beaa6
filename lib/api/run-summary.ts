import { completenessWords } from '../run/completeness.js';
import { isTerminal, type RunOutcome, type SyncRun } from '../run/model.js';

/*
 * A run's figures in words. An ended run speaks from its outcome, fixed when it ended (see
 * `RunOutcome`), with what became of its dead letters since beside it, labelled live; a run that
 * ended before outcomes were kept falls back to counting now, and says so.
 */

/** The outcome as a run view shows it: the fixed figures, or those counted now for an older run. */
export interface OutcomeFigures {
  readonly processed: number;
  readonly failed: number;
  readonly deadLettersFiled: number;
  readonly sourceTotal: number | null;
  /** True: written when the run ended. False: the run ended before outcomes were kept; counted now. */
  readonly fixed: boolean;
}

/** The figures of an outcome fixed when its run ended. */
export function fixedFigures(outcome: RunOutcome): OutcomeFigures {
  return {
    processed: outcome.processed,
    failed: outcome.failed,
    deadLettersFiled: outcome.deadLetters,
    sourceTotal: outcome.total,
    fixed: true,
  };
}

/** A run's outcome figures: null while it is active. */
export function outcomeFigures(
  run: Pick<SyncRun, 'state' | 'progress' | 'errorCount'> & { readonly outcome?: RunOutcome | undefined },
  openDeadLetters: number,
): OutcomeFigures | null {
  if (!isTerminal(run.state)) return null;
  if (run.outcome) return fixedFigures(run.outcome);
  // Ended before outcomes were kept: today's count of its open entries is all there is.
  return {
    processed: run.progress.processed,
    failed: run.errorCount,
    deadLettersFiled: openDeadLetters,
    sourceTotal: null,
    fixed: false,
  };
}

/** What the live count says of a run's filed dead letters: still open as its own, or moved on. */
export function liveDeadLetters(filed: number, open: number): string {
  if (filed === 0 && open === 0) return '';
  if (open >= filed) return ` (live: ${open} still open)`;
  return ` (live: ${open} still open as this run's; ${filed - open} since failed again in a later run, resolved or discarded)`;
}

/** The label of figures counted now for a run that ended before outcomes were kept. */
export const LEGACY_LABEL = ' (live count: the run ended before outcomes were kept)';

/** "485/500": what was processed of the source's stated total, or the count alone. */
function ofTotal(processed: number, total: number | null): string {
  return total === null || total === processed ? `${processed}` : `${processed}/${total}`;
}

/**
 * "1990/~2100 processed, 10 in DLQ" while running (the source's total is an estimate until the
 * run ends); once ended, "485/500 processed, 15 dead letters filed (live: 15 still open)" — the
 * fixed outcome, the source's own total kept. A retry-failed run says what it fixed.
 */
export function runSummary(
  run: Pick<SyncRun, 'progress' | 'state' | 'mode' | 'completeness'> & {
    readonly tombstoned?: number | null;
    readonly errorCount?: number;
    readonly outcome?: RunOutcome | undefined;
  },
  openDeadLetters: number,
): string {
  const { processed, total } = run.progress;
  const ended = isTerminal(run.state);
  const outcome = ended ? run.outcome : undefined;
  if (run.mode === 'dlq_retry' && ended) return retrySummary(run, outcome, openDeadLetters);
  const tombstones = typeof run.tombstoned === 'number' ? `, ${run.tombstoned} tombstoned` : '';
  const ahead = `${run.progress.ahead ? `, ${run.progress.ahead} stamped ahead of the run's clock` : ''}${completenessWords(run.completeness)}`;
  if (outcome) {
    const filed = `${outcome.deadLetters} dead ${outcome.deadLetters === 1 ? 'letter' : 'letters'} filed`;
    return `${ofTotal(outcome.processed, outcome.total)} processed, ${filed}${liveDeadLetters(outcome.deadLetters, openDeadLetters)}${tombstones}${ahead}`;
  }
  const counted = ended || total === null ? `${processed}` : `${processed}/~${total}`;
  const legacy = ended ? LEGACY_LABEL : '';
  return `${counted} processed, ${openDeadLetters} in DLQ${tombstones}${ahead}${legacy}`;
}

function retrySummary(
  run: Pick<SyncRun, 'progress'> & { readonly errorCount?: number },
  outcome: RunOutcome | undefined,
  openDeadLetters: number,
): string {
  // Entries resolved because their entity is gone from the source: nothing was stored for them.
  const gone = run.progress.gone ?? 0;
  const goneText = gone > 0 ? `, ${gone} gone from the source` : '';
  if (outcome) {
    const recovered = outcome.processed;
    const live = liveDeadLetters(outcome.deadLetters, openDeadLetters);
    if (recovered === 0 && gone === 0 && outcome.failed === 0)
      return 'nothing to retry: no open dead letters';
    if (recovered === 0 && gone === 0) return `fixed nothing: ${outcome.failed} failed again${live}`;
    return `recovered ${recovered}${goneText}, ${outcome.failed} failed again${live}`;
  }
  const processed = run.progress.processed;
  // errorCount: entries that failed again in this run; openDeadLetters: those still open now
  // (a later run may have resolved some since).
  const failedAgain = run.errorCount ?? openDeadLetters;
  const since = openDeadLetters < failedAgain ? `; ${failedAgain - openDeadLetters} resolved since` : '';
  if (processed === 0 && gone === 0 && failedAgain === 0) return 'nothing to retry: no open dead letters';
  if (processed === 0 && gone === 0)
    return `fixed nothing: ${failedAgain} still failing${since ? since : ' in DLQ'}${LEGACY_LABEL}`;
  return `recovered ${processed}${goneText}, ${failedAgain} still failing${since ? since : ' in DLQ'}${LEGACY_LABEL}`;
}
