import { CLI_START_GOAL } from './cli-start.js';
import type { GoalRow } from './report.js';

/**
 * `BENCH_MERGE=1` with `BENCH_ONLY=…`: re-measures some phases and keeps the others' numbers in
 * bench/results.json, so a slow phase can be measured again without re-running the ~20-minute
 * benchmark — and without a partial run writing `null` over numbers measured before. Only phases
 * listed in {@link PHASE_FIELDS} can be merged; each merged phase records when and where it was
 * measured under `phaseRuns`.
 */

/** The results fields and goal rows each mergeable phase owns. */
export const PHASE_FIELDS: Record<
  string,
  { readonly fields: readonly string[]; readonly goals: readonly string[] }
> = {
  partitioned: {
    fields: ['partitionedSpeedup', 'partitioned'],
    goals: ['partitioned run (k = 8) / bare sequential loop'],
  },
  cli: { fields: ['cliStartMs', 'cliStart'], goals: [CLI_START_GOAL] },
  budget: {
    fields: ['budgetRejected', 'budgetVsOptimum', 'sharedBudget'],
    goals: [
      'shared budget: requests refused by the source',
      'shared budget: wall time / quota-bound optimum',
    ],
  },
};

type Results = Record<string, unknown> & { goals: GoalRow[] };

/**
 * The previous results with the fields and goal rows of `phases` taken from `fresh`.
 *
 * @throws Error when a phase is not mergeable (its fields are not listed).
 */
export function mergeResults(previous: Results, fresh: Results, phases: readonly string[]): Results {
  const merged: Results = { ...previous, goals: [...previous.goals] };
  const phaseRuns = { ...((previous.phaseRuns as Record<string, unknown> | undefined) ?? {}) };
  for (const phase of phases) {
    const owned = PHASE_FIELDS[phase];
    if (!owned) throw new Error(`BENCH_MERGE: phase "${phase}" cannot be merged (see bench/merge.ts)`);
    for (const field of owned.fields) merged[field] = fresh[field];
    for (const goal of owned.goals) {
      const row = fresh.goals.find((g) => g.goal === goal);
      const at = merged.goals.findIndex((g) => g.goal === goal);
      if (row === undefined) continue;
      if (at === -1) merged.goals.push(row);
      else merged.goals[at] = row;
    }
    phaseRuns[phase] = { measuredAt: fresh.generatedAt, environment: fresh.environment };
  }
  merged.phaseRuns = phaseRuns;
  const errors = { ...((previous.errors as Record<string, string> | undefined) ?? {}) };
  for (const phase of phases) delete errors[phase];
  merged.errors = { ...errors, ...((fresh.errors as Record<string, string> | undefined) ?? {}) };
  return merged;
}
