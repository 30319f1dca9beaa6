import { RELIABILITY } from '../../lib/config/constants.js';
import { STEP_POINTS, type StepPoint } from '../../lib/engine/index.js';
import { DEAD_LETTER_RETRY_PAGE_SIZE } from '../../lib/engine/work/dead-letter-retry.js';
import { Rng } from './rng.js';

export const CHAOS_MODES = ['full', 'incremental', 'dlq_retry', 'live'] as const;
/** Connectors with a trial of their own in every chaos run, whatever the seeds pick. */
export const CONNECTOR_TRIALS = ['gitlab-issues', 's3-objects'] as const;
export type ConnectorTrial = (typeof CONNECTOR_TRIALS)[number];
/**
 * Partitioned runs, in every chaos run too: a full run (exact counts) and a live trial (its first
 * incremental run split while the source is edited), each under a seed's faults.
 */
export const PARTITION_TRIALS = ['full', 'live'] as const;
export type PartitionTrial = (typeof PARTITION_TRIALS)[number];
export type ChaosMode = (typeof CHAOS_MODES)[number];

/** A simulated crash (CrashHooks-style) at a step point of one page of the chaos run. */
export interface CrashFault {
  readonly point: StepPoint;
  readonly page: number;
}

/** A zombie: the worker of `page` dies at beforeFetch, a copy of its message is taken by a worker that freezes. */
export interface ZombieFault {
  readonly page: number;
  /** Where the zombie freezes: with the page fetched but not loaded, or loaded but not committed. */
  readonly pauseAt: 'beforeLoad' | 'afterLoad';
  /** When it thaws: right after the reaper fenced it, once the new epoch moved past its page, or after the run. */
  readonly release: 'afterFence' | 'afterProgress' | 'afterEnd';
}

/**
 * A slow worker: at its step point it stalls for `ms` (alive, heartbeating — a GC pause, a slow
 * dependency), and meanwhile SQS hands its message to another worker, as it does when a
 * visibility timeout runs out. The two copies race.
 */
export interface SlowFault {
  readonly point: 'beforeFetch' | 'afterLoad';
  readonly page: number;
  readonly ms: number;
}

/**
 * A queue backlog: the first successor of page ≥ `page` is sent (and confirmed), but no worker
 * gets it until the clock moved `waitMs` — longer than the 90 s silence threshold — and the reaper
 * ran. The reaper must judge the run waiting: a backlog is not a stall fault, it costs no restart.
 */
export interface BacklogFault {
  readonly page: number;
  readonly waitMs: number;
}

/**
 * A step that hits its time limit: the worker of page ≥ `page` claims it, stays in the fetch
 * (alive, heartbeating) for `stallMs` while the clock moves `fetchMs`, then is killed as Lambda
 * kills a step at its timeout. A stall fault: the reaper fences it and resumes or restarts.
 */
export interface TimeoutFault {
  readonly page: number;
  readonly stallMs: number;
  readonly fetchMs: number;
}

/**
 * A long or endless 429 storm: once the run committed `afterPages` pages, every source request
 * answers 429 with `Retry-After: retryAfterSeconds` (> 60 s, so each page is deferred through a
 * schedule, not slept) until the clock moved `durationMs` — or never (`null`). The supervisor lets
 * the clock run to each wake-up. A storm that ends within the 6 h progress budget must cost no
 * restart and lose nothing; an endless one must end the run `failed / source_unavailable` with
 * its source released, and retry-failed must fetch the page once the source is back.
 */
export interface StormFault {
  readonly afterPages: number;
  readonly retryAfterSeconds: number;
  readonly durationMs: number | null;
}

/** SIGKILL of the worker process once the run committed `afterPages` pages, `delayMs` after it looked busy. */
export interface KillFault {
  readonly afterPages: number;
  readonly delayMs: number;
}

/**
 * A live-source trial: the source is edited (touches, adds, deletes, tie groups) before every
 * listing request while an incremental run — and, if planned, a reconciliation — reads it.
 */
export interface LivePlan {
  readonly shape: 'github' | 'gitlab' | 'rest-page' | 'rest-cursor';
  readonly touchesPerPage: number;
  readonly addsPerPage: number;
  readonly deletesPerPage: number;
  /** The touches before one request share one updatedAt (bulk edits: tie groups). */
  readonly tied: boolean;
  /** Also race a reconciliation against the edits (then a quiet one must tombstone exactly the deleted). */
  readonly reconcile: boolean;
}

/** Queue-level faults of the PageQueue wrapper. */
export interface DeliveryFaults {
  /** Probability that a page message is sent twice. */
  readonly duplicateRate: number;
  /** Probability that a send also re-sends an older message of the trial. */
  readonly resendRate: number;
  /** Probability that a send is delayed 1–2 s (DelaySeconds); at most `maxDelays` per trial. */
  readonly delayRate: number;
  readonly maxDelays: number;
  /**
   * Probability that sending a successor fails after its page was committed (an SQS error
   * between commit and send); at most `maxSendFailures` per trial. The page's redelivery or the
   * reaper must re-send it at the same epoch, without a restart.
   */
  readonly sendFailureRate?: number;
  readonly maxSendFailures?: number;
}

/** Everything a trial does, derived from its seed alone. */
export interface TrialPlan {
  readonly seed: number;
  readonly mode: ChaosMode;
  readonly entities: number;
  readonly pageSize: number;
  /** Records the source serves broken (dead-lettered by full and incremental runs). */
  readonly invalid: number;
  /** 429 storm: this fraction of source requests answered 429 with Retry-After 1–2 s. */
  readonly rate429: number;
  readonly delivery: DeliveryFaults;
  readonly crashes: readonly CrashFault[];
  readonly zombie: ZombieFault | null;
  readonly kill: KillFault | null;
  readonly slow: SlowFault | null;
  /** Incremental: entities modified behind the committed cursor at the afterCommit of these pages. */
  readonly touches: readonly { readonly afterPage: number; readonly count: number }[];
  /** Incremental: modifications between the chaos run and the catch-up run. */
  readonly catchUp: { readonly touch: number; readonly add: number };
  /** dlq_retry: how many of the broken records are fixed before retry-failed (all of them, or some). */
  readonly fixed: number;
  /** live: the edits racing the runs. */
  readonly live: LivePlan | null;
  /** The successor that waits in the queue past the silence threshold. */
  readonly backlog: BacklogFault | null;
  /** The step killed at its time limit after a long fetch (a third kind of stall, never a third stall). */
  readonly timeout: TimeoutFault | null;
  /** full / incremental: a 429 storm that lasts hours (endless: full runs only). */
  readonly storm: StormFault | null;
  /** The chaos run (and a live trial's raced run) may be split into at most this many partitions; null: one stream. */
  readonly partitions: number | null;
}

/** Pages the chaos run is expected to take (an estimate for placing faults; touches may add one). */
export function expectedPages(plan: Pick<TrialPlan, 'mode' | 'entities' | 'pageSize' | 'invalid'>): number {
  if (plan.mode === 'dlq_retry') return Math.floor(plan.invalid / DEAD_LETTER_RETRY_PAGE_SIZE) + 1;
  return Math.ceil(plan.entities / plan.pageSize);
}

/**
 * Derives a trial from its seed. At most two faults that stall the run (crashes, zombie, kill,
 * a step timeout) are planned: each costs one reaper restart, and a run may be restarted three times before it
 * ends `restart_limit`, which leaves one restart of margin.
 */
export function planTrial(seed: number): TrialPlan {
  const rng = new Rng(seed);
  const mode = rng.pick(CHAOS_MODES);
  // Few entities: moto serves ~50–100 requests/s, and a page of n items costs ~n + 10 requests.
  const entities = mode === 'dlq_retry' ? rng.int(60, 150) : rng.int(100, 250);
  const pageSize = rng.pick([30, 40, 50, 60, 75]);
  const invalid = mode === 'dlq_retry' ? rng.int(10, 45) : mode === 'live' ? 0 : rng.int(0, 8);
  const base = { mode, entities, pageSize, invalid };
  const pages = expectedPages(base);
  const rate429 = rng.chance(0.35) ? rng.pick([0.1, 0.2, 0.3]) : 0;
  const delivery: DeliveryFaults = {
    duplicateRate: 0.1,
    resendRate: rng.chance(0.5) ? 0.1 : 0,
    delayRate: rng.chance(0.4) ? 0.15 : 0,
    maxDelays: 2,
    // Drawn from the plan's stream after everything else, so older seeds keep their other faults.
    ...(rng.chance(0.5) ? { sendFailureRate: 0.2, maxSendFailures: 2 } : {}),
  };

  const stalls = rng.pick([0, 1, 1, 2, 2, 2]);
  const kinds = rng.sample(['crash', 'crash', 'zombie', 'kill'] as const, stalls);
  const crashes: CrashFault[] = kinds
    .filter((k) => k === 'crash')
    .map(() => ({ point: rng.pick(STEP_POINTS), page: rng.int(1, pages) }));
  const zombie: ZombieFault | null = kinds.includes('zombie')
    ? {
        page: rng.int(1, pages),
        pauseAt: mode === 'dlq_retry' ? 'afterLoad' : rng.pick(['beforeLoad', 'afterLoad'] as const),
        release: rng.pick(['afterFence', 'afterProgress', 'afterEnd'] as const),
      }
    : null;
  const kill: KillFault | null = kinds.includes('kill')
    ? { afterPages: rng.int(0, Math.max(0, pages - 1)), delayMs: rng.int(0, 200) }
    : null;

  const slow: SlowFault | null = rng.chance(0.5)
    ? {
        point: rng.pick(['beforeFetch', 'afterLoad'] as const),
        page: rng.int(1, pages),
        ms: rng.int(1_000, 2_500),
      }
    : null;
  const touches =
    mode === 'incremental' && pages > 1
      ? Array.from({ length: rng.int(1, 2) }, () => ({
          afterPage: rng.int(1, pages - 1),
          count: rng.int(1, 5),
        }))
      : [];
  const catchUp =
    mode === 'incremental' ? { touch: rng.int(0, 3), add: rng.int(0, 3) } : { touch: 0, add: 0 };
  const fixed = mode === 'dlq_retry' ? (rng.chance(0.4) ? invalid : rng.int(0, invalid)) : 0;
  const live: LivePlan | null =
    mode === 'live'
      ? {
          shape: rng.pick(['github', 'gitlab', 'rest-page', 'rest-cursor'] as const),
          touchesPerPage: rng.int(1, 3),
          addsPerPage: rng.int(0, 1),
          deletesPerPage: rng.int(0, 1),
          tied: rng.chance(0.3),
          reconcile: rng.chance(0.5),
        }
      : null;
  // Drawn after everything else, so older seeds keep their other faults.
  const backlog: BacklogFault | null =
    pages > 1 && rng.chance(0.35)
      ? { page: rng.int(2, pages), waitMs: rng.int(RELIABILITY.silenceThresholdMs + 5_000, 5 * 60_000) }
      : null;
  const timeout: TimeoutFault | null =
    rng.chance(0.3) && stalls < 2
      ? { page: rng.int(1, pages), stallMs: rng.int(300, 1_200), fetchMs: rng.int(60_000, 240_000) }
      : null;
  const storm = planStorm(rng, mode, pages);
  return {
    seed,
    ...base,
    rate429,
    delivery,
    crashes,
    zombie,
    kill,
    slow,
    touches,
    catchUp,
    fixed,
    live,
    backlog,
    timeout,
    storm,
    partitions: null,
  };
}

/**
 * The plan of a partition trial: the seed's faults — crashes, a zombie, a SIGKILL, a step timeout,
 * a slow worker whose message is redelivered, duplicate, delayed and failed sends — on a
 * run split into 2–4 partitions (crashes land on whichever partition reaches their page first).
 * Sources of 150–250 entities in pages of 20–30, so every partition has pages to crash on. No
 * queue backlog: the partitions that are not held keep the run moving, which is not what that
 * fault tests.
 */
export function planPartitionTrial(seed: number, kind: PartitionTrial): TrialPlan {
  const plan = planTrial(seed);
  const rng = new Rng(seed ^ 0x9a27171);
  const entities = rng.int(150, 250);
  const pageSize = rng.pick([20, 25, 30]);
  const pages = Math.ceil(entities / pageSize / 2);
  const live: LivePlan = {
    shape: 'github',
    touchesPerPage: rng.int(1, 3),
    addsPerPage: rng.int(0, 1),
    deletesPerPage: rng.int(0, 1),
    tied: rng.chance(0.3),
    reconcile: rng.chance(0.5),
  };
  return {
    ...plan,
    mode: kind,
    entities,
    pageSize,
    invalid: kind === 'live' ? 0 : rng.int(0, 6),
    // No 429 storms: planning lists the source many times, and one 429 anywhere sends the whole
    // plan back to its retry loop (the run is then read as one stream, correctly, but unsplit);
    // and rate-budget waits learned from 429s meet the clock the trials move for the reaper.
    rate429: 0,
    // Crashes and the zombie on pages every partition reaches.
    crashes: plan.crashes.map((c) => ({ ...c, page: Math.min(c.page, pages) })),
    zombie: plan.zombie ? { ...plan.zombie, page: Math.min(plan.zombie.page, pages) } : null,
    timeout: plan.timeout ? { ...plan.timeout, page: Math.min(plan.timeout.page, pages) } : null,
    touches: [],
    catchUp: { touch: 0, add: 0 },
    fixed: 0,
    live: kind === 'live' ? live : null,
    backlog: null,
    // No storms either (see rate429).
    storm: null,
    partitions: rng.int(2, 4),
  };
}

const HOUR_MS = 3_600_000;

/**
 * Drawn after everything else, so older seeds keep their other faults. Waits are long enough that
 * the reaper's pass inside each pause sees the run silent (> 90 s), and few enough per storm (≤ 8
 * wake-ups) to fit a trial: an endless storm waits 1–2 h per wake-up until the 6 h budget is
 * spent; a storm that ends lasts at most 5 h and waits at most 30 min, so it always ends within
 * the budget.
 */
function planStorm(rng: Rng, mode: ChaosMode, pages: number): StormFault | null {
  if ((mode !== 'full' && mode !== 'incremental') || !rng.chance(0.3)) return null;
  // At least one page after the storm starts, so it meets a fetch.
  const afterPages = rng.int(0, Math.max(0, pages - 2));
  if (mode === 'full' && rng.chance(0.4)) {
    return { afterPages, retryAfterSeconds: rng.int(3_600, 7_200), durationMs: null };
  }
  const retryAfterSeconds = rng.int(120, 1_800);
  const durationMs = rng.int(retryAfterSeconds * 1_000, Math.min(5 * HOUR_MS, 6 * retryAfterSeconds * 1_000));
  return { afterPages, retryAfterSeconds, durationMs };
}

/**
 * The plan of a connector trial: the seed's faults (crashes, zombie, kill, slow worker, delivery
 * faults, throttling), run as a live trial over the connector's source — the fake source's GitLab
 * shape, or a bucket on the emulator's S3 (s3-trial.ts).
 */
export function planConnectorTrial(seed: number, connector: ConnectorTrial): TrialPlan {
  const plan = planTrial(seed);
  const rng = new Rng(seed ^ 0x3c0ffee);
  return {
    ...plan,
    mode: 'live',
    storm: null,
    // S3 lists cheaply: smaller pages give the planned crashes and edits more pages to land on.
    pageSize: connector === 's3-objects' ? Math.ceil(plan.pageSize / 3) : plan.pageSize,
    invalid: 0,
    touches: [],
    live: {
      shape: connector === 'gitlab-issues' ? 'gitlab' : 'rest-cursor',
      touchesPerPage: rng.int(1, 3),
      addsPerPage: rng.int(0, 1),
      deletesPerPage: rng.int(0, 1),
      tied: connector === 'gitlab-issues' && rng.chance(0.3),
      reconcile: true,
    },
  };
}
