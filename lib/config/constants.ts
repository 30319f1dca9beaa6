/**
 * The fixed reliability constants, in one place.
 *
 * These are module constants, never source settings: every source gets the same retry, heartbeat
 * and freshness behaviour, so an operator can reason about any run with the same numbers. Every
 * other timing value in the system (Lambda timeout, SQS visibility timeout, reaper cadence) is
 * derived from these below, so changing one keeps the others consistent.
 */
export const RELIABILITY = {
  /** 1 + 4 retries, in memory: transient faults heal inside one invocation. */
  attemptsPerRequest: 5,
  /** Timeout of one source request (the connectors' HTTP helper uses this value): part of every attempt's worst case. */
  requestTimeoutMs: 30_000,
  /** Full-jitter exponential backoff base: the n-th retry waits up to base × 2^(n-1). */
  backoffBaseMs: 1_000,
  /** Stays below the 90 s silence threshold, so a sleeping worker still heartbeats in time. */
  backoffCapMs: 60_000,
  /**
   * Longer waits (a large Retry-After, a rate-limit window) are not slept: the page is deferred
   * through the queue, which frees the worker slot instead of burning Lambda time.
   */
  maxInlineWaitMs: 60_000,
  /**
   * A request that must wait this long or less for its credential's rate budget sleeps in the
   * invocation (heartbeats go on); a longer wait defers the page to its reserved slot.
   */
  maxInlineBudgetWaitMs: 20_000,
  /**
   * A request's hold on one of its credential's concurrency slots lapses after this long unless
   * released: the request timeout plus a margin, so a crashed worker cannot keep a slot.
   */
  budgetLeaseMs: 45_000,
  /** Longest SQS DelaySeconds (900 s); longer deferrals use an EventBridge Scheduler one-time schedule. */
  maxQueueDelayMs: 900_000,
  /** Heartbeat from a timer independent of the retry loop: a long in-attempt pause must not look like death. */
  heartbeatIntervalMs: 30_000,
  /** Three missed beats: rides out GC pauses, reclaims a stuck run in 1–2 minutes. */
  silenceThresholdMs: 90_000,
  /**
   * Pages in a row of one chain that, each failed for good with the next page computable (page
   * numbers), end the run `pages_failing`: the pages before are skipped (dead-lettered), this many
   * in a row means the listing most likely ended or broke, and reading on would file one dead
   * letter per request until the page budget.
   */
  pageFailuresInRow: 3,
  /** Cursors and catalogs older than this are stale: discard them and restart from scratch. */
  checkpointFreshnessMs: 6 * 60 * 60 * 1_000,
  /**
   * A run that made no progress for this long — every wake-up deferred again by a throttling or
   * unavailable source — ends `failed` with `source_unavailable` and releases its source. The
   * same 6 h as the freshness budget: past it the position would be discarded anyway.
   */
  progressBudgetMs: 6 * 60 * 60 * 1_000,
  /**
   * A page confirmed on the queue but not taken by any worker for this long is presumed lost and
   * sent again at the same epoch (the commit condition makes the extra copy harmless). A backlog
   * longer than this costs one cheap duplicate per waiting run per period, never a restart.
   */
  queueWaitResendMs: 15 * 60 * 1_000,
  /**
   * A send takes milliseconds: a handoff still unconfirmed this long after it was recorded was
   * lost. Younger ones may be a send in progress (another reaper's re-send, a worker right after
   * its commit) and are left alone.
   */
  sendGraceMs: 5_000,
  /**
   * A run whose worker dies this many times is a crash loop, not bad luck: it ends `failed` with
   * `restart_limit`. Three lets a run survive two unrelated crashes (a deploy, an OOM) but stops a
   * poison page within ~5 minutes of reaper ticks instead of burning Lambda time forever.
   */
  maxRestartsPerRun: 3,
  /** The reaper runs on this cadence (EventBridge Scheduler `rate(1 minute)`). */
  reaperIntervalMs: 60_000,
  /** Items above this size are dead-lettered: DynamoDB's item limit is 400 KB, keys and metadata included. */
  maxItemBytes: 350 * 1_024,
  /** Attempts per message before SQS moves it to the page DLQ (redrive). */
  maxReceiveCount: 5,
} as const;

/**
 * The worst stretch one source request may spend in its retry loop: every attempt waiting the
 * longest inline rate-budget wait and running into the request timeout, and every retry waiting
 * the backoff cap (5 × (20 s + 30 s) + 4 × 60 s = 490 s). Longer waits are deferred, never slept,
 * so nothing else stretches a step.
 */
export const WORST_RETRY_STRETCH_MS =
  RELIABILITY.attemptsPerRequest * (RELIABILITY.maxInlineBudgetWaitMs + RELIABILITY.requestTimeoutMs) +
  (RELIABILITY.attemptsPerRequest - 1) * RELIABILITY.backoffCapMs;

/** Time a step needs besides its source requests: reading the run, loading a page of items, committing. */
export const STEP_OVERHEAD_MS = 120_000;

/** Lambda timeout of the page worker: the worst retry stretch plus the step's own work (610 s). */
export const WORKER_TIMEOUT_SECONDS = Math.ceil((WORST_RETRY_STRETCH_MS + STEP_OVERHEAD_MS) / 1_000);

/** Entries a retry-failed page re-fetches at once (one wave). */
export const RETRY_CONCURRENCY = 5;

/**
 * Waves of {@link RETRY_CONCURRENCY} re-fetches that fit one worker invocation at their worst,
 * so a retry-failed page is never killed by the Lambda timeout while its source throttles.
 */
export const RETRY_WAVES_PER_PAGE = Math.max(
  1,
  Math.floor((WORKER_TIMEOUT_SECONDS * 1_000 - STEP_OVERHEAD_MS) / WORST_RETRY_STRETCH_MS),
);

/**
 * Fetches by id one step makes at most — a retry-failed page's entries, a reconciliation slice's
 * absence confirmations: {@link RETRY_WAVES_PER_PAGE} waves of {@link RETRY_CONCURRENCY}, each
 * fetch with its full retries, so the step ends within the worker timeout at their worst.
 */
export const FETCHES_BY_ID_PER_STEP = RETRY_CONCURRENCY * RETRY_WAVES_PER_PAGE;

/**
 * SQS visibility timeout of the page queue: at least six times the function timeout, as AWS
 * recommends for event source mappings, so a message is not redelivered while a slow but healthy
 * invocation still holds it.
 */
export const PAGE_QUEUE_VISIBILITY_SECONDS = 6 * WORKER_TIMEOUT_SECONDS;

/** Retention of the page DLQ: the SQS maximum, 14 days, so an operator back from a weekend still finds it. */
export const PAGE_DLQ_RETENTION_SECONDS = 14 * 24 * 60 * 60;
