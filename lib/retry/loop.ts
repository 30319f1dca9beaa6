import { RELIABILITY } from '../config/constants.js';
import { backoffCeilingMs, backoffDelayMs } from './backoff.js';
import type { Classification } from './errors.js';
import type { RetryDeps, RetryOutcome } from './outcome.js';

/** What the loop reports before each in-memory retry (for logs and metrics). */
export interface RetryInfo {
  /** The attempt that just failed (1-based). */
  readonly attempt: number;
  /** How long the loop sleeps before the next attempt. */
  readonly waitMs: number;
  readonly classification: Classification;
}

/** Options of {@link retryWithBackoff}; the defaults are the fixed constants. */
export interface RetryOptions {
  /** Attempts in total, the first included. Default `RELIABILITY.attemptsPerRequest` (5). */
  readonly attempts?: number;
  /**
   * Attempts already spent on this operation by earlier deliveries (a deferred page carries them
   * on its message): numbering continues from here and they count against `attempts`. Default 0.
   */
  readonly attemptsUsed?: number;
  /** Longer waits are deferred through the queue instead of slept. Default `RELIABILITY.maxInlineWaitMs` (60 s). */
  readonly maxInlineWaitMs?: number;
  /** Called before each sleep; an exception it throws is ignored so logging can never break a page. */
  readonly onRetry?: (info: RetryInfo) => void;
}

/**
 * A classifier that cannot itself throw: a bug in a connector's classifier becomes a permanent
 * verdict (dead letter with the classifier's message), not an exception that loses the page.
 */
function safeClassify(classify: (error: unknown) => Classification, error: unknown): Classification {
  try {
    return classify(error);
  } catch (failure) {
    const message = failure instanceof Error ? failure.message : String(failure);
    return { errorClass: 'permanent', reason: `error classifier failed: ${message}` };
  }
}

/**
 * The wait before the next attempt: the source's own wait when it named a usable one (it knows
 * best), the full-jitter backoff otherwise. A NaN or infinite wait from a faulty classifier falls
 * back to the backoff (it must not defer a page to the end of time). A wait that is already over
 * (a reset our clock sees as past) waits the backoff ceiling of this retry instead: retrying at
 * once would spend every attempt within milliseconds against a source that just refused.
 */
function nextWaitMs(classification: Classification, attempt: number, deps: RetryDeps): number {
  const asked = classification.waitMs;
  if (asked === undefined || !Number.isFinite(asked)) return backoffDelayMs(attempt, deps.random);
  return asked <= 0 ? backoffCeilingMs(attempt) : asked;
}

/** A wait the source asked for that is too long to sleep in this invocation. */
function longWaitAsked(classification: Classification, maxInlineWaitMs: number): boolean {
  const asked = classification.waitMs;
  return asked !== undefined && Number.isFinite(asked) && asked > maxInlineWaitMs;
}

function notify(onRetry: RetryOptions['onRetry'], info: RetryInfo): void {
  try {
    onRetry?.(info);
  } catch {
    // Observability hooks are best-effort; the retry decision is already made.
  }
}

/**
 * Runs `op` with in-memory retries and says what came of it. Never throws for errors
 * of `op`: every failure ends as an outcome the engine acts on.
 *
 * - success → `ok` with the attempts used;
 * - permanent error → `dead_letter` at once (retrying cannot help);
 * - transient error with a wait ≤ `maxInlineWaitMs` → sleep, then the next attempt;
 * - transient error with a longer wait the source asked for → `defer` until `now + wait`,
 *   without sleeping, so the worker slot is freed and the page comes back through the queue — also
 *   on the last attempt: a source that says "come back in an hour" is throttling, not broken, and
 *   the engine bounds such waits by the run's progress budget, not by attempts;
 * - any other transient error on the last attempt → `dead_letter` with class `transient` and the
 *   last reason.
 *
 * @param op - receives the 1-based attempt number.
 * @param classify - usually `(e) => connector.classify(e, deps.now())`.
 * @example
 * const outcome = await retryWithBackoff(() => connector.fetchPage(config, cursor, ctx),
 *   (e) => connector.classify(e, deps.now()), realRetryDeps);
 * if (outcome.kind === 'defer') await queue.deferPage(message, outcome.untilMs);
 */
export async function retryWithBackoff<T>(
  op: (attempt: number) => Promise<T>,
  classify: (error: unknown) => Classification,
  deps: RetryDeps,
  options: RetryOptions = {},
): Promise<RetryOutcome<T>> {
  const attempts = Math.max(1, options.attempts ?? RELIABILITY.attemptsPerRequest);
  const maxInlineWaitMs = options.maxInlineWaitMs ?? RELIABILITY.maxInlineWaitMs;
  for (let attempt = Math.max(0, options.attemptsUsed ?? 0) + 1; ; attempt++) {
    let error: unknown;
    try {
      return { kind: 'ok', value: await op(attempt), attempts: attempt };
    } catch (caught) {
      error = caught;
    }
    const classification = safeClassify(classify, error);
    const { errorClass, reason } = classification;
    if (errorClass === 'permanent') {
      return { kind: 'dead_letter', errorClass, reason, attempts: attempt, error };
    }
    if (longWaitAsked(classification, maxInlineWaitMs)) {
      return { kind: 'defer', untilMs: deps.now() + classification.waitMs!, reason, attempts: attempt };
    }
    if (attempt >= attempts) {
      return { kind: 'dead_letter', errorClass, reason, attempts: attempt, error };
    }
    const waitMs = nextWaitMs(classification, attempt, deps);
    notify(options.onRetry, { attempt, waitMs, classification });
    await deps.sleep(waitMs);
  }
}
