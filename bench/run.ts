/**
 * `npm run bench`: the benchmark of issue "Proof" (items 3 and 4). Starts its own emulator
 * (or uses AWS_ENDPOINT_URL), runs each phase on its own resources, prints a table and writes
 * bench/results.json. BENCH_QUICK=1 skips the 50,000-entity memory run; BENCH_ONLY=bare,pipeline,
 * kill,load,memory,partitioned,budget,cli runs a subset (for development; the other fields are null), and with
 * BENCH_MERGE=1 keeps the other phases' numbers from the previous results.json (see merge.ts).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import { startEmulator } from '../lib/local/emulator.js';
import { type BareLoopResult, runBareLoop, THROUGHPUT_SOURCE } from './bare-loop.js';
import { type CliStartResult, cliStartGoal, runCliStart } from './cli-start.js';
import { COST_FORMULA, costPerMillion, PRICES_USD, requestsPerPage, WORKER_MEMORY_GB } from './cost.js';
import { buildGoals } from './goals.js';
import { type KillResult, runKill } from './kill.js';
import { type LoadResult, runLoad } from './load.js';
import { type MemoryResult, runMemory } from './memory.js';
import { mergeResults } from './merge.js';
import { modelAws } from './model.js';
import { PARTITIONED_SOURCE, type PartitionedResult, runPartitioned } from './partitioned.js';
import { type PipelineResult, runPipeline } from './pipeline.js';
import { printGoals, printRequests, printTable, show } from './report.js';
import { round } from './setup.js';
import { runSharedBudget, type SharedBudgetResult } from './shared-budget.js';

const QUICK = process.env.BENCH_QUICK === '1';
const ONLY = process.env.BENCH_ONLY?.split(',').map((s) => s.trim());
const MERGE = process.env.BENCH_MERGE === '1' && ONLY !== undefined;
const wanted = (phase: string) => !ONLY || ONLY.includes(phase);
const RESULTS = fileURLToPath(new URL('./results.json', import.meta.url));

const errors: Record<string, string> = {};

/** Runs one phase; a failed phase is recorded (and fails the exit code), the others still run. */
async function phase<T>(name: string, work: () => Promise<T>): Promise<T | null> {
  if (!wanted(name)) return null;
  const started = performance.now();
  console.error(`bench: ${name}…`);
  try {
    const result = await work();
    console.error(`bench: ${name} done in ${round((performance.now() - started) / 1_000, 1)} s`);
    return result;
  } catch (error) {
    errors[name] = error instanceof Error ? error.message : String(error);
    console.error(`bench: ${name} FAILED: ${errors[name]}`);
    return null;
  }
}

const emulator = await startEmulator();
let bare: BareLoopResult | null = null;
let pipeline: PipelineResult | null = null;
let kill: KillResult | null = null;
let load: LoadResult | null = null;
let memory5k: MemoryResult | null = null;
let memory50k: MemoryResult | null = null;
let partitioned: PartitionedResult | null = null;
let sharedBudget: SharedBudgetResult | null = null;
let cliStart: CliStartResult | null = null;
try {
  bare = await phase('bare', runBareLoop);
  pipeline = await phase('pipeline', () => runPipeline(emulator.endpoint));
  kill = await phase('kill', () => runKill(emulator.endpoint));
  load = await phase('load', () => runLoad(emulator.endpoint));
  memory5k = await phase('memory', () => runMemory(emulator.endpoint, 5_000));
  if (!QUICK) memory50k = await phase('memory', () => runMemory(emulator.endpoint, 50_000));
  partitioned = await phase('partitioned', () => runPartitioned(emulator.endpoint));
  sharedBudget = await phase('budget', () => runSharedBudget(emulator.endpoint));
  cliStart = await phase('cli', async () => runCliStart());
} finally {
  await emulator.stop();
}

const perPage = pipeline ? requestsPerPage(pipeline.ops, pipeline.pages, pipeline.entities) : null;
const invocationsPerPage = pipeline ? pipeline.handler.count / pipeline.pages : 1;
const model = perPage && bare ? modelAws(perPage, bare.bareLoopSeconds) : null;
const measuredCost =
  perPage && pipeline ? costPerMillion(perPage, invocationsPerPage, pipeline.handler.meanMs / 1_000) : null;
const modeledCost =
  perPage && model ? costPerMillion(perPage, 1, model.modeledHandlerMsPerPage / 1_000) : null;
const overheadRatio = bare && pipeline ? round(pipeline.pipelineSeconds / bare.bareLoopSeconds, 2) : null;

const results = {
  generatedAt: new Date().toISOString(),
  environment: {
    node: process.version,
    cpus: cpus().length,
    emulator: emulator.owned
      ? 'moto_server started by the benchmark (DynamoDB requests serialized)'
      : emulator.endpoint,
    quick: QUICK,
    only: ONLY ?? null,
  },
  source: { ...THROUGHPUT_SOURCE, faults: 'none' },
  bareLoopSeconds: bare?.bareLoopSeconds ?? null,
  pipelineSeconds: pipeline?.pipelineSeconds ?? null,
  overheadRatio,
  pipeline: pipeline && {
    pages: pipeline.pages,
    entities: pipeline.entities,
    workers: pipeline.workers,
    handlerMs: pipeline.handler,
    duplicatePageServes: pipeline.duplicatePageServes,
    note: 'emulator-bound: measured against moto, which serializes DynamoDB requests (~100 requests/s here)',
  },
  modeledAwsPipelineSeconds: model?.modeledAwsPipelineSeconds ?? null,
  modeledAwsOverheadRatio: model?.modeledAwsOverheadRatio ?? null,
  modeledAwsAssumption: model?.assumption ?? null,
  requestsPerPage: perPage,
  costPerMillionEntitiesUsd: measuredCost?.totalUsd ?? null,
  costBreakdown: {
    measuredOnEmulator: measuredCost,
    modeledAws: modeledCost,
    note:
      'costPerMillionEntitiesUsd uses the Lambda duration measured on moto (an upper bound); modeledAws uses the ' +
      'modeled AWS handler duration. Both use the request counts measured on moto.',
    prices: PRICES_USD,
    workerMemoryGb: WORKER_MEMORY_GB,
  },
  costFormula: COST_FORMULA,
  peakRssMb: { '5000': memory5k?.peakRssMb ?? null, '50000': memory50k?.peakRssMb ?? null },
  memory: {
    runs: [memory5k, memory50k].filter(Boolean),
    note: QUICK
      ? 'BENCH_QUICK=1: the 50,000-entity run was skipped (null)'
      : 'peak resident set (VmHWM, /proc) of the one child worker process of each run, sampled every 250 ms',
  },
  pagesRefetchedAfterKill: kill?.pagesRefetchedAfterKill ?? null,
  kill,
  load,
  partitionedSpeedup: partitioned?.partitionedSpeedup ?? null,
  partitioned,
  budgetRejected: sharedBudget?.budgetRejected ?? null,
  budgetVsOptimum: sharedBudget?.budgetVsOptimum ?? null,
  sharedBudget,
  cliStartMs: cliStart?.cliStartMs ?? null,
  cliStart,
  goals: [] as ReturnType<typeof buildGoals>,
  errors,
};
results.goals = buildGoals({
  overheadRatio,
  model,
  perPage,
  measuredCost,
  memory5k,
  memory50k,
  kill,
  load,
  partitioned,
  sharedBudget,
});
results.goals.push(cliStartGoal(cliStart));
const written = MERGE
  ? mergeResults(JSON.parse(readFileSync(RESULTS, 'utf8')), results, ONLY ?? [])
  : results;
writeFileSync(RESULTS, `${JSON.stringify(written, null, 2)}\n`);

printTable(
  'Harvester benchmark',
  ['measure', 'value'],
  [
    [
      'source',
      `${THROUGHPUT_SOURCE.entities} entities, ${THROUGHPUT_SOURCE.pageSize}/page, ${THROUGHPUT_SOURCE.latencyMs} ms/page, no faults`,
    ],
    ['bare loop (sequential fetch, no persistence)', show(bare?.bareLoopSeconds, ' s')],
    ['pipeline on moto (startRun → terminal)', show(pipeline?.pipelineSeconds, ' s')],
    ['overhead ratio on moto (emulator-bound)', show(overheadRatio, '×')],
    ['pipeline on AWS, MODELED', show(model?.modeledAwsPipelineSeconds, ' s')],
    ['overhead ratio on AWS, MODELED', show(model?.modeledAwsOverheadRatio, '×')],
    ['handler per page on moto (mean)', show(pipeline?.handler.meanMs, ' ms', 0)],
    ['requests per page: item writes', show(perPage?.itemWrites, '', 3)],
    ['requests per page: control plane (engine + ESM)', show(perPage?.controlPlane, '', 3)],
    ['requests per page: control plane (engine only)', show(perPage?.controlPlaneEngineOnly, '', 3)],
    ['cost per million entities (moto duration)', show(measuredCost?.totalUsd, ' USD', 4)],
    ['cost per million entities (modeled AWS duration)', show(modeledCost?.totalUsd, ' USD', 4)],
    ['peak worker RSS at 5,000 entities', show(memory5k?.peakRssMb, ' MB', 1)],
    [
      'peak worker RSS at 50,000 entities',
      memory50k ? show(memory50k.peakRssMb, ' MB', 1) : 'skipped (BENCH_QUICK)',
    ],
    ['pages re-fetched after SIGKILL', show(kill?.pagesRefetchedAfterKill, '', 0)],
    ['load: sources × entities', load ? `${load.sources} × ${load.entitiesPerSource}` : 'n/a'],
    ['load: wall time', show(load?.wallSeconds, ' s')],
    ['load: emulator share of worker busy time', show(load?.emulatorShare, '', 3)],
    ['load: all succeeded with exact counts', load ? String(load.allSucceeded) : 'n/a'],
    [
      'partitioned: source',
      `${PARTITIONED_SOURCE.entities} issues, ${PARTITIONED_SOURCE.perPage}/page, ${PARTITIONED_SOURCE.latencyMs} ms/page`,
    ],
    ['partitioned: bare loop (one stream)', show(partitioned?.bareLoopSeconds, ' s')],
    [
      `partitioned: pipeline, k = ${PARTITIONED_SOURCE.partitions}`,
      partitioned?.unavailable ? 'unavailable' : show(partitioned?.pipelineSeconds, ' s'),
    ],
    ['partitioned: speedup ratio (pipeline / bare loop)', show(partitioned?.partitionedSpeedup, '×', 3)],
    ['partitioned: emulator floor (no source latency)', show(partitioned?.emulatorFloorSeconds, ' s')],
    [
      'shared budget: sources × entities, quota',
      sharedBudget
        ? `${sharedBudget.sources} × ${sharedBudget.entitiesPerSource}, ${sharedBudget.quota.limit} per ${sharedBudget.quota.windowSeconds} s`
        : 'n/a',
    ],
    [
      'shared budget: requests, rejected',
      sharedBudget ? `${sharedBudget.requests}, ${sharedBudget.budgetRejected}` : 'n/a',
    ],
    [
      'shared budget: wall time vs quota-bound optimum',
      sharedBudget ? `${sharedBudget.seconds} s vs ${sharedBudget.optimumSeconds} s` : 'n/a',
    ],
    ['CLI start: harvester --help (median of 10)', show(cliStart?.cliStartMs, ' ms', 0)],
  ],
);
if (partitioned?.unavailable) console.log(`\npartitioned: ${partitioned.unavailable}`);
if (perPage) printRequests(perPage.byOperation);
printGoals(results.goals);
console.log(`\nwrote ${RESULTS}${MERGE ? ` (merged: ${ONLY?.join(', ')})` : ''}`);

if (load && !load.allSucceeded) console.error(`load phase failed:\n  ${load.failures.join('\n  ')}`);
if (sharedBudget && !sharedBudget.allSucceeded)
  console.error(`shared budget phase failed:\n  ${sharedBudget.failures.join('\n  ')}`);
const failed =
  Object.keys(errors).length > 0 ||
  (load !== null && !load.allSucceeded) ||
  (sharedBudget !== null && !sharedBudget.allSucceeded);
process.exit(failed ? 1 : 0);
