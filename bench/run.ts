/**
 * `npm run bench`: starts its own emulator (or uses AWS_ENDPOINT_URL), runs each phase on its own
 * resources, prints a table, writes bench/results.json in full and regenerates the tables of
 * docs/benchmark.md from it. BENCH_QUICK=1 skips the 50,000-entity memory run; BENCH_ONLY=bare,
 * pipeline,sized,kill,load,memory,partitioned,budget,cli runs a subset for development: such a partial
 * run writes bench/out/results.partial.json and leaves results.json and the docs alone, so the
 * published numbers always come from one run of one version of the code.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { startEmulator } from '../lib/local/emulator.js';
import { type BareLoopResult, runBareLoop, THROUGHPUT_SOURCE } from './bare-loop.js';
import { type CliStartResult, cliStartGoal, runCliStart } from './cli-start.js';
import {
  COST_FORMULA,
  type Cost,
  costPerMillion,
  PRICES_USD,
  type RequestsPerPage,
  requestsPerPage,
  WORKER_MEMORY_GB,
} from './cost.js';
import { buildGoals } from './goals.js';
import { type KillResult, runKill } from './kill.js';
import { type LoadResult, runLoad } from './load.js';
import { type MemoryResult, runMemory } from './memory.js';
import { modelAws } from './model.js';
import { PARTITIONED_SOURCE, type PartitionedResult, runPartitioned } from './partitioned.js';
import { type PipelinePhases, type PipelineResult, runPipeline, runSizedLoad } from './pipeline.js';
import { writeBenchmarkDocs } from './readme.js';
import { printGoals, printRequests, printTable, show } from './report.js';
import { round } from './setup.js';
import { runSharedBudget, type SharedBudgetResult } from './shared-budget.js';

const QUICK = process.env.BENCH_QUICK === '1';
const ONLY = process.env.BENCH_ONLY?.split(',').map((s) => s.trim());
const wanted = (phase: string) => !ONLY || ONLY.includes(phase);
const RESULTS = fileURLToPath(
  new URL(ONLY ? './out/results.partial.json' : './results.json', import.meta.url),
);

/**
 * For development only: BENCH_PIPELINE_ENTITIES=1000 shrinks the pipeline phase's source (a partial
 * run; per-page figures stay comparable, timings do not).
 */
const PIPELINE_ENTITIES = ONLY
  ? Number(process.env.BENCH_PIPELINE_ENTITIES ?? THROUGHPUT_SOURCE.entities)
  : THROUGHPUT_SOURCE.entities;

/**
 * For development only: BENCH_BUDGETS=off wires no rate-budget store, to see what the budget
 * costs a phase (a partial run; the published numbers are measured with budgets, as deployed).
 */
if (process.env.BENCH_BUDGETS === 'off' && !ONLY) {
  throw new Error(
    'BENCH_BUDGETS=off is for partial runs (with BENCH_ONLY=…): results.json is measured with rate budgets',
  );
}

/** Entities and body size of the realistic-size phase (GitHub issues with bodies are 1–4 KB). */
const SIZED = { entities: 2_000, bodyBytes: 1_400 } as const;

const errors: Record<string, string> = {};
/** When and where each phase was measured. */
const phases: Record<string, { measuredAt: string; seconds: number; environment: typeof environment }> = {};
let environment: Record<string, unknown> = {};

/** Runs one phase; a failed phase is recorded (and fails the exit code), the others still run. */
async function phase<T>(name: string, work: () => Promise<T>): Promise<T | null> {
  if (!wanted(name)) return null;
  const started = performance.now();
  const measuredAt = new Date().toISOString();
  console.error(`bench: ${name}…`);
  try {
    const result = await work();
    const seconds = round((performance.now() - started) / 1_000, 1);
    phases[name] = { measuredAt, seconds, environment };
    console.error(`bench: ${name} done in ${seconds} s`);
    return result;
  } catch (error) {
    errors[name] = error instanceof Error ? error.message : String(error);
    console.error(`bench: ${name} FAILED: ${errors[name]}`);
    return null;
  }
}

const emulator = await startEmulator();
environment = {
  node: process.version,
  cpus: cpus().length,
  cpuModel: cpus()[0]?.model ?? null,
  loadAverage1m: round(loadavg()[0] ?? 0, 2),
  emulator: emulator.owned
    ? 'moto_server started by the benchmark (DynamoDB requests serialized)'
    : emulator.endpoint,
  quick: QUICK,
  only: ONLY ?? null,
};
let bare: BareLoopResult | null = null;
let passes: PipelinePhases | null = null;
let sized: PipelineResult | null = null;
let kill: KillResult | null = null;
let load: LoadResult | null = null;
let memory5k: MemoryResult | null = null;
let memory50k: MemoryResult | null = null;
let partitioned: PartitionedResult | null = null;
let sharedBudget: SharedBudgetResult | null = null;
let cliStart: CliStartResult | null = null;
try {
  bare = await phase('bare', runBareLoop);
  passes = await phase('pipeline', () => runPipeline(emulator.endpoint, PIPELINE_ENTITIES));
  sized = await phase('sized', () => runSizedLoad(emulator.endpoint, SIZED.entities, SIZED.bodyBytes));
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

const pipeline = passes?.firstLoad ?? null;
const perPage = pipeline ? requestsPerPage(pipeline.ops, pipeline.pages, pipeline.entities) : null;
const model = perPage && bare ? modelAws(perPage, bare.bareLoopSeconds) : null;
const measuredCost = pipeline && perPage ? atMotoDuration(pipeline, perPage) : null;
const firstLoadCost = pipeline && perPage ? atModeledDuration(perPage) : null;
const reread = passes ? billed(passes.unchangedReread) : null;
const reconciliation = passes ? billed(passes.reconciliationUnchanged) : null;
const sizedCost = sized ? billed(sized) : null;
const modeledCost =
  perPage && model ? costPerMillion(perPage, 1, model.modeledHandlerMsPerPage / 1_000) : null;
const overheadRatio = bare && pipeline ? round(pipeline.pipelineSeconds / bare.bareLoopSeconds, 2) : null;

const results = {
  generatedAt: new Date().toISOString(),
  environment,
  phases,
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
    measuredAt: pipeline.measuredAt,
    note: 'emulator-bound: measured against moto, which serializes DynamoDB requests (~100 requests/s here)',
  },
  modeledAwsPipelineSeconds: model?.modeledAwsPipelineSeconds ?? null,
  modeledAwsOverheadRatio: model?.modeledAwsOverheadRatio ?? null,
  modeledAwsAssumption: model?.assumption ?? null,
  requestsPerPage: perPage,
  costPerMillionEntitiesUsd: firstLoadCost?.totalUsd ?? null,
  costPerMillionUnchangedRereadUsd: reread?.cost.totalUsd ?? null,
  costPerMillionReconciliationUnchangedUsd: reconciliation?.cost.totalUsd ?? null,
  costPerMillionEntities2KbUsd: sizedCost?.cost.totalUsd ?? null,
  unchangedReread: reread,
  reconciliationUnchanged: reconciliation,
  entities2Kb: sizedCost && { ...sizedCost, bodyBytes: SIZED.bodyBytes },
  costBreakdown: {
    measuredOnEmulator: measuredCost,
    modeledAws: modeledCost,
    note:
      'Every costPerMillion…Usd prices the billed units counted on moto and Lambda at the modeled AWS handler ' +
      'duration of its run (the fetch time per page — from the bare loop, else the source latency — plus the ' +
      "run's counted requests at typical AWS latencies, see modeledAwsAssumption): moto serializes DynamoDB " +
      'requests, so handler durations measured on it (measuredOnEmulator, and atMotoDuration of each run) are ' +
      'an upper bound that depends on how busy the machine was.',
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
  measuredCost: firstLoadCost,
  memory5k,
  memory50k,
  kill,
  load,
  partitioned,
  sharedBudget,
  rereadUsd: reread?.cost.totalUsd ?? null,
  reconciliationUsd: reconciliation?.cost.totalUsd ?? null,
});
results.goals.push(cliStartGoal(cliStart));
mkdirSync(fileURLToPath(new URL('./out/', import.meta.url)), { recursive: true });
writeFileSync(RESULTS, `${JSON.stringify(results, null, 2)}\n`);
if (!ONLY) writeBenchmarkDocs(results);

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
    ['cost per million entities (modeled AWS duration)', show(firstLoadCost?.totalUsd, ' USD', 4)],
    ['cost per million entities (moto duration)', show(measuredCost?.totalUsd, ' USD', 4)],
    ['cost per million unchanged entities, second full run', show(reread?.cost.totalUsd, ' USD', 4)],
    ['cost per million unchanged entities, reconciliation', show(reconciliation?.cost.totalUsd, ' USD', 4)],
    ['cost per million ~2 KB entities, first load', show(sizedCost?.cost.totalUsd, ' USD', 4)],
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
console.log(`\nwrote ${RESULTS}${ONLY ? '' : ' and the tables of docs/benchmark.md'}`);

if (load && !load.allSucceeded) console.error(`load phase failed:\n  ${load.failures.join('\n  ')}`);
if (sharedBudget && !sharedBudget.allSucceeded)
  console.error(`shared budget phase failed:\n  ${sharedBudget.failures.join('\n  ')}`);
const failed =
  Object.keys(errors).length > 0 ||
  (load !== null && !load.allSucceeded) ||
  (sharedBudget !== null && !sharedBudget.allSucceeded);
process.exit(failed ? 1 : 0);

/** The billed cost per million entities of one run, Lambda priced at its handler durations measured on moto. */
function atMotoDuration(run: PipelineResult, perPage: RequestsPerPage): Cost {
  return costPerMillion(perPage, run.handler.count / run.pages, run.handler.meanMs / 1_000);
}

/**
 * The billed cost per million entities of one run, Lambda priced at the modeled AWS duration of its
 * pages (one invocation a page): the run's own requests at AWS latencies plus the fetch time per page.
 */
function atModeledDuration(perPage: RequestsPerPage): Cost {
  const fetchSecondsPerPage = bare ? bare.bareLoopSeconds / bare.pages : THROUGHPUT_SOURCE.latencyMs / 1_000;
  const modeled = modelAws(perPage, fetchSecondsPerPage * perPage.pages);
  return costPerMillion(perPage, 1, modeled.modeledHandlerMsPerPage / 1_000);
}

/** Requests, billed units and cost of one run. */
function billed(run: PipelineResult) {
  const perPage = requestsPerPage(run.ops, run.pages, run.entities);
  return {
    mode: run.mode,
    measuredAt: run.measuredAt,
    seconds: run.pipelineSeconds,
    pages: run.pages,
    entities: run.entities,
    handlerMs: run.handler,
    ...(run.meanItemBytes === undefined ? {} : { meanItemBytes: run.meanItemBytes }),
    requestsPerPage: perPage,
    cost: atModeledDuration(perPage),
    atMotoDuration: atMotoDuration(run, perPage),
  };
}
