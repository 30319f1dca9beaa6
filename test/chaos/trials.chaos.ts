/**
 * The chaos suite (`npm run test:chaos`): seeded randomized trials against the emulator, each
 * checked against the fake source's ground truth.
 *
 * **Trial model.** A trial is a pure function of its seed ({@link planTrial}): a mode — `full`,
 * `incremental` (a chaos run from scratch, then a catch-up run after more modifications) or
 * `dlq_retry` (a full sync with broken records, a partial or complete fix, then retry-failed) —
 * 60–250 entities in pages of 30–75, and a fault mix:
 *
 * - duplicate deliveries (~10 % of sends twice), re-sends of older messages, and DelaySeconds on
 *   some sends — a PageQueue wrapper under the in-process workers and the reaper;
 * - 429 storms at the source (Retry-After 1–2 s);
 * - up to two stalling faults: simulated crashes at step points, a SIGKILLed worker process, a
 *   zombie that freezes mid-page with its heartbeats suppressed and thaws after the fence, a step
 *   killed at its time limit (claimed, alive in a long fetch while the clock moves 1–4 min, then dead);
 * - a queue backlog: a successor sent and confirmed but held back until the clock moved past the
 *   90 s silence threshold and the reaper ran — it must report the run waiting and fence nothing;
 * - a long or endless 429 storm (full and incremental runs): every source request throttled with a
 *   `Retry-After` of 2 min–2 h, so each page is deferred through a schedule; the supervisor runs
 *   the trial's clock (shared with the worker process and the runtime's schedule firer) to each
 *   wake-up and ticks the reaper inside each pause — it must leave the deferred run alone. A storm
 *   that ends (within 5 h) must cost no restart and lose nothing; an endless one must end the run
 *   `failed / source_unavailable` within the 6 h budget with its source released, and retry-failed
 *   must then fetch exactly the page it could not (`storm.ts`, `storm-checks.ts`);
 * - a slow worker that stalls (alive) at a step point while its message is redelivered to another
 *   worker, so two copies of one page race;
 * - incremental runs: entities modified behind the committed cursor while the run reads.
 *
 * Two in-process workers and one worker process poll the page queue. A supervisor plays the
 * reaper's clock: when nothing alive works on the run (queue counts, worker bookkeeping, or 3 s of
 * silence after a SIGKILL) it moves the clock past the 90 s silence threshold and reaps.
 *
 * **Invariants** (see `invariants.ts`): no entity lost, none duplicated, no older version over a
 * newer one, counts exact (processed, errorCount against dead_letters, pages), every run terminal
 * with a resume verdict matching its restarts, no lock left held, the page DLQ empty, a fenced
 * worker writes nothing, and no stall that no crash, kill or step timeout explains (a backlog
 * explains none, and its run must be judged waiting).
 *
 * **Connector trials.** Besides the seeded trials, every run holds one trial per connector in
 * `CONNECTOR_TRIALS` (`gitlab-issues` as a live trial over the fake source's GitLab shape,
 * `s3-objects` over a bucket on the emulator's S3 with `SlowDown` answers, see `s3-trial.ts`).
 *
 * **Zoo trials.** `CHAOS_ZOO_TRIALS=N` (default 3) sources drawn from the source zoo (traits of
 * real APIs, see `test/support/zoo/`), each harvested through the chaos environment (duplicate
 * and re-sent messages, the worker process) while the source answers 5 % of requests with
 * transient faults and 3 % with 429s: the zoo's invariants must hold (`zoo-trial.ts`).
 *
 * `CHAOS_TRIALS=N` (default 30) sets the number of fresh seeds, `CHAOS_PARTITION_TRIALS=N`
 * (default 1) the seeds of each partition trial; `CHAOS_SEED=S` replays one trial's
 * plan (the interleaving of real workers is not replayed, so a rare race may need a few runs).
 * `CHAOS_VERBOSE=1` prints every trial's timeline.
 */
import { describe, it } from 'vitest';
import { useChaosEnv } from './chaos-env.js';
import { FaultTally } from './fault-tally.js';
import {
  CONNECTOR_TRIALS,
  PARTITION_TRIALS,
  planConnectorTrial,
  planPartitionTrial,
  planTrial,
  type TrialPlan,
} from './plan.js';
import { connectorTrialSeed, partitionTrialSeeds, trialSeeds, zooTrialSeeds } from './rng.js';
import { runTrial, type TrialOutcome } from './trial.js';
import { zooTrial } from './zoo-trial.js';

const seeds = trialSeeds();
const chaosEnv = useChaosEnv();
const tally = new FaultTally();

function report(plan: TrialPlan, outcome: TrialOutcome): string {
  return [
    `chaos trial seed ${plan.seed} (${plan.mode}, ${plan.entities} entities, ${(outcome.ms / 1_000).toFixed(1)} s)`,
    ...outcome.violations.map((v) => `  ✗ ${v}`),
    `  plan: ${JSON.stringify(plan)}`,
    '  timeline:',
    ...outcome.timeline.map((line) => `    ${line}`),
    `  replay: CHAOS_SEED=${plan.seed} npm run test:chaos`,
  ].join('\n');
}

describe('chaos trials', () => {
  it.each(seeds)('seed %i: nothing lost, nothing duplicated, counts exact, every run ended', async (seed) => {
    const plan = planTrial(seed);
    const outcome = await runTrial(chaosEnv(), plan);
    tally.add(outcome.injected);
    if (outcome.violations.length > 0) throw new Error(report(plan, outcome));
    if (process.env.CHAOS_VERBOSE === '1') console.log(report(plan, outcome));
  });
});

describe('connector trials', () => {
  // Every chaos run also runs each newer connector once under a seed's faults (CHAOS_SEED replays it).
  it.each(CONNECTOR_TRIALS)(
    '%s: nothing lost under faults and live edits, exactly the deleted tombstoned',
    async (connector) => {
      const plan = planConnectorTrial(connectorTrialSeed(connector), connector);
      const outcome = await runTrial(chaosEnv(), plan, connector === 's3-objects' ? 's3-objects' : undefined);
      tally.add(outcome.injected);
      if (outcome.violations.length > 0) throw new Error(report(plan, outcome));
      if (process.env.CHAOS_VERBOSE === '1') console.log(report(plan, outcome));
    },
  );
});

describe('partition trials', () => {
  // Every chaos run also runs a partitioned full run and a partitioned live trial under a seed's
  // faults (CHAOS_SEED replays them).
  // `CHAOS_PARTITION_TRIALS=N` runs N seeds of each kind.
  const partitionTrials = PARTITION_TRIALS.flatMap((kind) =>
    partitionTrialSeeds(kind).map((seed) => [kind, seed] as const),
  );
  it.each(partitionTrials)(
    '%s (seed %i), split into partitions: nothing lost, nothing duplicated, counts exact per partition and in all',
    async (kind, seed) => {
      const plan = planPartitionTrial(seed, kind);
      const outcome = await runTrial(chaosEnv(), plan);
      tally.add(outcome.injected);
      if (outcome.violations.length > 0) throw new Error(report(plan, outcome));
      if (process.env.CHAOS_VERBOSE === '1') console.log(report(plan, outcome));
    },
  );
});

describe('zoo trials', () => {
  // Sources drawn from the source zoo, under the chaos environment and the source's own faults.
  const seeds = zooTrialSeeds();
  it.skipIf(seeds.length === 0).each(seeds)(
    'seed %i: a source drawn from the zoo, harvested under faults, matches the source',
    async (seed) => {
      const outcome = await zooTrial(chaosEnv(), seed);
      if (outcome.violations.length > 0) throw new Error(outcome.report);
      if (process.env.CHAOS_VERBOSE === '1') console.log(outcome.report);
    },
  );
});

describe('DynamoDB faults across the trials', () => {
  // Each trial must meet a conflict (trial.ts); stale reads land only where a read is eventually
  // consistent and follows a write closely (the reaper's index query), so the suite as a whole
  // must have met them — else the stale-read half of the fault layer proved nothing.
  it('the fault layer injected conflicts and stale reads, and the trials held', () => {
    console.log(`DynamoDB faults injected across ${tally.trials} trials: ${JSON.stringify(tally.total)}`);
    const problems = tally.check(process.env);
    if (problems.length > 0) throw new Error(problems.join('\n'));
  });
});
