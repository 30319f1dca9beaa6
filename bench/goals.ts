import type { Cost, RequestsPerPage } from './cost.js';
import type { KillResult } from './kill.js';
import type { LoadResult } from './load.js';
import type { MemoryResult } from './memory.js';
import type { AwsModel } from './model.js';
import type { PartitionedResult } from './partitioned.js';
import { type GoalRow, show } from './report.js';
import type { SharedBudgetResult } from './shared-budget.js';

/** "Flat" memory: the 50,000-entity peak stays within this factor of the 5,000-entity peak. */
export const FLAT_MEMORY_TOLERANCE = 1.15;

/** What the goals are judged on. */
export interface GoalInputs {
  readonly overheadRatio: number | null;
  readonly model: AwsModel | null;
  readonly perPage: RequestsPerPage | null;
  readonly measuredCost: Cost | null;
  readonly memory5k: MemoryResult | null;
  readonly memory50k: MemoryResult | null;
  readonly kill: KillResult | null;
  readonly load: LoadResult | null;
  readonly partitioned: PartitionedResult | null;
  readonly sharedBudget: SharedBudgetResult | null;
  /** Billed cost per million of the unchanged re-reads (second `full` run, reconciliation). */
  readonly rereadUsd: number | null;
  readonly reconciliationUsd: number | null;
}

/** The `partitioned` goal: a run split into 8 partitions takes at most this share of one stream's time. */
export const PARTITIONED_SPEEDUP_GOAL = 0.25;

/** The `shared budget` goal: the wall time stays within this factor of the quota-bound optimum. */
export const BUDGET_VS_OPTIMUM_GOAL = 1.2;

const judge = (value: number | null | undefined, ok: (v: number) => boolean) =>
  value === null || value === undefined ? null : ok(value);

/** The goals of issue "Proof", each next to the measured value, judged honestly. */
export function buildGoals(i: GoalInputs): GoalRow[] {
  const flat =
    i.memory5k && i.memory50k ? i.memory50k.peakRssMb <= i.memory5k.peakRssMb * FLAT_MEMORY_TOLERANCE : null;
  return [
    {
      goal: 'overhead ratio on moto',
      target: '≤ 1.3',
      measured: show(i.overheadRatio, '×'),
      met: judge(i.overheadRatio, (v) => v <= 1.3),
      note: 'emulator-bound: moto serializes DynamoDB requests (~100/s), so ~100 item writes cost ~1 s per page',
    },
    {
      goal: 'overhead ratio on AWS (MODELED)',
      target: '≤ 1.3',
      measured: show(i.model?.modeledAwsOverheadRatio, '×'),
      met: judge(i.model?.modeledAwsOverheadRatio, (v) => v <= 1.3),
      note:
        'an estimate from the measured request counts at typical AWS latencies: fetch, load and commit of a ' +
        'page are sequential, so loading and control-plane time add to every page fetch',
    },
    {
      goal: 'control-plane requests per page',
      target: '≤ 6',
      measured: `${show(i.perPage?.controlPlane, '', 2)} (engine only ${show(i.perPage?.controlPlaneEngineOnly, '', 2)})`,
      met: judge(i.perPage?.controlPlane, (v) => v <= 6),
      note: 'judged including the event source mapping’s receive + delete (2 per page)',
    },
    {
      goal: 'cost per million entities (first load, ≤ 1 KB, billed units)',
      target: '≤ $0.70',
      measured: show(i.measuredCost?.totalUsd, ' USD', 4),
      met: judge(i.measuredCost?.totalUsd, (v) => v <= 0.7),
      note: 'dominated by the item writes themselves (1 WRU per entity = $0.625 per million)',
    },
    {
      goal: 'cost per million unchanged entities, second full run',
      target: '≤ $0.15',
      measured: show(i.rereadUsd, ' USD', 4),
      met: judge(i.rereadUsd, (v) => v <= 0.15),
    },
    {
      goal: 'cost per million unchanged entities, reconciliation',
      target: '≤ $0.20',
      measured: show(i.reconciliationUsd, ' USD', 4),
      met: judge(i.reconciliationUsd, (v) => v <= 0.2),
    },
    {
      goal: 'flat memory (peak worker RSS 5k → 50k)',
      target: `50k ≤ ${FLAT_MEMORY_TOLERANCE} × 5k`,
      measured: `${show(i.memory5k?.peakRssMb, ' MB', 1)} → ${show(i.memory50k?.peakRssMb, ' MB', 1)}`,
      met: flat,
    },
    {
      goal: 'pages re-fetched per SIGKILL',
      target: '≤ 1',
      measured: show(i.kill?.pagesRefetchedAfterKill, '', 0),
      met: judge(i.kill?.pagesRefetchedAfterKill, (v) => v <= 1),
    },
    {
      goal: 'load: 50 concurrent runs succeed with exact counts',
      target: 'all',
      measured: i.load ? `${i.load.sources - i.load.failures.length}/${i.load.sources}` : 'n/a',
      met: i.load ? i.load.allSucceeded : null,
    },
    {
      goal: 'partitioned run (k = 8) / bare sequential loop',
      target: `≤ ${PARTITIONED_SPEEDUP_GOAL}`,
      measured: i.partitioned?.unavailable ? 'unavailable' : show(i.partitioned?.partitionedSpeedup, '×', 3),
      met: i.partitioned?.unavailable
        ? false
        : judge(i.partitioned?.partitionedSpeedup, (v) => v <= PARTITIONED_SPEEDUP_GOAL),
      note: i.partitioned?.unavailable ?? i.partitioned?.note,
    },
    {
      goal: 'shared budget: requests refused by the source',
      target: '0',
      measured: show(i.sharedBudget?.budgetRejected, '', 0),
      met: judge(i.sharedBudget?.budgetRejected, (v) => v === 0),
      note: '10 sources sharing one token against a quota keyed by token (GitHub-like 403 + X-RateLimit-*)',
    },
    {
      goal: 'shared budget: wall time / quota-bound optimum',
      target: `≤ ${BUDGET_VS_OPTIMUM_GOAL}`,
      measured: show(i.sharedBudget?.budgetVsOptimum, '×', 3),
      met: judge(i.sharedBudget?.budgetVsOptimum, (v) => v <= BUDGET_VS_OPTIMUM_GOAL),
      note: 'optimum: the earliest the quota admits the last request the runs needed, from the same start',
    },
  ];
}
