import type { DynamoFaultCounts } from '../../lib/aws/dynamo-faults.js';
import type { StepPoint } from '../../lib/engine/index.js';
import { startRun } from '../../lib/engine/index.js';
import { minusLookback } from '../../lib/engine/run/watermark.js';
import type { RunMode } from '../../lib/run/model.js';
import { startFakeSource } from '../../tools/fake-source/index.js';
import { fakeRestConfig, putSource } from '../support/harness.js';
import type { ChaosEnv } from './chaos-env.js';
import { checkFaultsInjected, dynamoFaultPlan, faultsSince } from './dynamo-trial-faults.js';
import type { PlannedCrash, StepContext } from './hooks.js';
import { checkRun, type Expected } from './invariants.js';
import { liveTrial } from './live-trial.js';
import type { ChaosMode, TrialPlan } from './plan.js';
import { Rng } from './rng.js';
import { s3Trial } from './s3-trial.js';
import { endedByStorm, sourceProfile } from './storm.js';
import { checkEndlessStorm } from './storm-checks.js';
import { type RunRecord, Supervisor } from './supervisor.js';
import { latest, slowWorker, split, type Trial, touchBehindCursor } from './trial-faults.js';

/** What a trial did and which invariants it broke. */
export interface TrialOutcome {
  readonly violations: string[];
  readonly timeline: string[];
  readonly ms: number;
  /** What the DynamoDB fault layer injected during the trial. */
  readonly injected: DynamoFaultCounts;
}

let sources = 0;

/**
 * Runs one trial: its mode's runs under its faults, each checked against the fake source's truth.
 * `connector: 's3-objects'` runs the plan as the S3 trial (s3-trial.ts) instead of its mode.
 */
export async function runTrial(
  env: ChaosEnv,
  plan: TrialPlan,
  connector?: 's3-objects',
): Promise<TrialOutcome> {
  const started = Date.now();
  const timeline: string[] = [];
  const log = (line: string) => timeline.push(`${String(Date.now() - started).padStart(6)} ms  ${line}`);
  env.clock.reset();
  const fake = await startFakeSource({
    entities: plan.entities,
    seed: plan.seed,
    profile: sourceProfile(plan),
  });
  const rng = new Rng(plan.seed ^ 0x5bd1e995);
  const trial: Trial = {
    env,
    plan,
    fake,
    sourceId: `chaos-${plan.seed}-${++sources}`,
    rng,
    log,
    baseline: null,
  };
  try {
    await putSource(
      env.deps,
      trial.sourceId,
      'rest-json',
      fakeRestConfig(fake.url, { pageSize: plan.pageSize }),
    );
    env.queue.arm(plan.delivery, rng);
    const faultPlan = dynamoFaultPlan(plan.seed, () => env.clock.now());
    env.faults.set(faultPlan);
    const counted = { ...env.faults.counts };
    const violations =
      connector === 's3-objects' ? await s3Trial(trial, supervisedRun) : await MODES[plan.mode](trial);
    log(`deliveries: ${JSON.stringify(env.queue.stats)}`);
    const injected = faultsSince(counted, env.faults);
    log(`dynamo faults: ${JSON.stringify(injected)}`);
    violations.push(...checkFaultsInjected(faultPlan, injected));
    return { violations, timeline, ms: Date.now() - started, injected };
  } finally {
    env.faults.set({ seed: 0 });
    env.hooks.disarm();
    env.queue.disarm();
    await fake.stop();
  }
}

const MODES: Record<ChaosMode, (trial: Trial) => Promise<string[]>> = {
  full: async (trial) => {
    const { record, stallFaults } = await supervisedRun(trial, 'full', true);
    if (endedByStorm(record.storm, record.run))
      return checkEndlessStorm(trial, record, stallFaults, supervisedRun);
    return checkRun(trial.env, trial.fake, record, fullExpectation(trial, 'chaos full run', stallFaults));
  },

  incremental: async (trial) => {
    const { plan, fake } = trial;
    const touched = new Set<string>();
    const { record, stallFaults } = await supervisedRun(
      trial,
      'incremental',
      true,
      touchBehindCursor(trial, touched),
    );
    const { valid, invalid } = split(fake);
    const violations = await checkRun(trial.env, fake, record, {
      label: 'chaos incremental run',
      mode: 'incremental',
      processed: valid.length + touched.size,
      errorCount: invalid.length,
      entriesOfRun: invalid.length,
      pages: Math.ceil((plan.entities + touched.size) / plan.pageSize),
      watermark: latest(valid),
      stallFaults,
    });
    // Modifications between runs, then a catch-up run that must read exactly what changed.
    const since = latest(valid);
    fake.control.touch(trial.rng.sample(valid, plan.catchUp.touch).map((e) => e.id));
    fake.control.add(plan.catchUp.add);
    trial.log(`catch-up after touching ${plan.catchUp.touch} and adding ${plan.catchUp.add} entities`);
    const after = split(fake);
    // The catch-up run asks from the watermark minus the lookback (an env setting, 5 s by default).
    const from = since === null ? null : minusLookback(since, trial.env.deps.limits.watermarkLookbackMs);
    const window = fake.truth().entities.filter((e) => from !== null && e.updatedAt >= from);
    const windowInvalid = window.filter((e) => after.broken.has(e.id)).length;
    const catchUp = await supervisedRun(trial, 'incremental', false);
    violations.push(
      ...(await checkRun(trial.env, fake, catchUp.record, {
        label: 'catch-up incremental run',
        mode: 'incremental',
        processed: window.length - windowInvalid,
        errorCount: windowInvalid,
        entriesOfRun: windowInvalid,
        pages: Math.max(1, Math.ceil(window.length / plan.pageSize)),
        watermark: latest(after.valid),
        stallFaults: catchUp.stallFaults,
      })),
    );
    return violations;
  },

  dlq_retry: async (trial) => {
    const { plan, fake, rng } = trial;
    const setup = await supervisedRun(trial, 'full', false);
    const violations = await checkRun(
      trial.env,
      fake,
      setup.record,
      fullExpectation(trial, 'setup full run', setup.stallFaults),
    );
    // The setup full run read a keyed stream: it set the watermark, which retry-failed leaves alone.
    const setupWatermark = latest(split(fake).valid);
    const broken = [...fake.truth().invalidIds];
    const fixed = plan.fixed === broken.length ? broken : rng.sample(broken, plan.fixed);
    if (fixed.length === broken.length) fake.control.fix();
    else fake.control.fix(fixed);
    trial.log(`fixed ${fixed.length} of ${broken.length} broken records`);
    const { record, stallFaults } = await supervisedRun(trial, 'dlq_retry', true);
    // After a restart from scratch the final epoch loads only what was still open at the fence.
    const loadedByFinalEpoch = record.openAtLastFence
      ? fixed.filter((id) => record.openAtLastFence!.has(id))
      : fixed;
    const stillOpen = new Set(fake.truth().invalidIds);
    violations.push(
      ...(await checkRun(trial.env, fake, record, {
        label: 'retry-failed run',
        mode: 'dlq_retry',
        processed: loadedByFinalEpoch.length,
        errorCount: stillOpen.size,
        stillOpen,
        watermark: setupWatermark,
        stallFaults,
      })),
    );
    return violations;
  },

  live: (trial) => liveTrial(trial, supervisedRun),
};

/** Starts a run and watches it to its end; with `faulty`, under the plan's crashes, zombie and kill. */
export async function supervisedRun(
  trial: Trial,
  mode: RunMode,
  faulty: boolean,
  onStep?: (point: StepPoint, context: StepContext) => Promise<void>,
): Promise<{ record: RunRecord; stallFaults: number }> {
  const { env, plan } = trial;
  const faults = faulty
    ? { kill: plan.kill, zombie: plan.zombie, backlog: plan.backlog, storm: plan.storm }
    : { kill: null, zombie: null, backlog: null, storm: null };
  const supervisor = new Supervisor(env, trial.fake, faults, trial.log, plan);
  if (trial.baseline === null) trial.baseline = await supervisor.ledger.calibrate();
  else supervisor.ledger.useBaseline(trial.baseline);
  const logCrash = (point: StepPoint, c: StepContext) =>
    trial.log(
      `crash at ${point} of page ${c.page}, epoch ${c.epoch}: the worker dies, its message stays in flight`,
    );
  const crashes: PlannedCrash[] = faulty
    ? plan.crashes.map((crash) => ({ ...crash, onCrash: (c: StepContext) => logCrash(crash.point, c) }))
    : [];
  if (faults.zombie) {
    crashes.push({
      point: 'beforeFetch',
      page: faults.zombie.page,
      onCrash: (c) => {
        logCrash('beforeFetch', c);
        supervisor.launchZombie(c);
      },
    });
  }
  const timeout = faulty ? plan.timeout : null;
  if (timeout) {
    crashes.push({
      point: 'beforeFetch',
      page: timeout.page,
      before: async (c) => {
        // A fetch that outlasts the step's time limit: alive and beating, while the clock runs.
        await new Promise((resolve) => setTimeout(resolve, timeout.stallMs));
        env.clock.advance(timeout.fetchMs);
        trial.log(
          `step timeout: page ${c.page} (epoch ${c.epoch}) spent ${timeout.fetchMs} ms in its fetch; Lambda kills the worker`,
        );
      },
      onCrash: (c) => logCrash('beforeFetch', c),
    });
  }
  const slow = faulty ? slowWorker(trial) : undefined;
  env.hooks.arm({
    crashes,
    onStep: async (point, context) => {
      await onStep?.(point, context);
      await slow?.(point, context);
    },
  });
  // A storm planned from the first page is on before the run starts.
  supervisor.storm?.maybeStart(0);
  const partitions = plan.partitions !== null && faulty ? { partitions: plan.partitions } : {};
  const started = await startRun(env.deps, { sourceId: trial.sourceId, mode, ...partitions });
  env.hooks.bind(started.runId);
  if (faults.backlog) env.queue.armBacklog(started.runId, faults.backlog.page);
  trial.log(`${mode} run ${started.runId} started${faulty ? " under the plan's faults" : ''}`);
  const record = await supervisor.watch(started.runId, mode);
  const fired = env.hooks.fired.length;
  env.hooks.disarm();
  // Simulated crashes are counted by the workers; what a killed process took with it is not.
  trial.baseline = record.killed ? null : trial.baseline;
  const { run } = record;
  trial.log(
    `${mode} run ended ${run.state}: epoch ${run.epoch}, processed ${run.progress.processed}, errors ${run.errorCount}, pages ${run.progress.pages}, resume ${run.resume?.reason}`,
  );
  return { record, stallFaults: fired + (record.killed ? 1 : 0) };
}

function fullExpectation(trial: Trial, label: string, stallFaults: number): Expected {
  const { valid, invalid } = split(trial.fake);
  const partitioned = trial.plan.partitions !== null && label === 'chaos full run';
  return {
    label,
    mode: 'full',
    processed: valid.length,
    errorCount: invalid.length,
    entriesOfRun: invalid.length,
    // A partitioned run's pages depend on where its windows fall (checked per partition instead).
    ...(partitioned
      ? { partitions: trial.plan.partitions! }
      : { pages: Math.ceil(trial.plan.entities / trial.plan.pageSize) }),
    // A successful full run over a keyed stream sets the watermark: it read everything.
    watermark: latest(valid),
    stallFaults,
  };
}
