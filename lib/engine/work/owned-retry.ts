import { METRIC } from '../../observability/metrics.js';
import { retryWithBackoff } from '../../retry/loop.js';
import type { RetryDeps, RetryOutcome } from '../../retry/outcome.js';
import { ownedSleep, RateBudgetWaitError } from '../sources/rate-budget.js';
import type { StepContext } from '../step/context.js';

/*
 * The retry loop as the page step runs it: bound to the step's ownership, a budget wait kept
 * apart from failures, and everything the connector hands back scrubbed of the step's secrets.
 */

/**
 * Retry timing bound to the step's ownership: a backoff sleep ends early when a heartbeat learns
 * the run was cancelled or fenced, so a stopped worker never sleeps out a minute of backoff.
 */
export function ownedRetryDeps(context: StepContext): RetryDeps {
  return { ...context.deps.retry, sleep: ownedSleep(context) };
}

/**
 * Runs `operation` under the retry loop, checking ownership before every attempt: once the run
 * is lost the attempt throws the store's refusal, which no classifier retries, and the caller's
 * `ensureOwned()` turns the outcome into a clean stop.
 */
export async function retryOwned<T>(
  context: StepContext,
  operation: () => Promise<T>,
): Promise<RetryOutcome<T>> {
  const { deps, connector } = context;
  // Where a source's answer leaves the connector: its value and every failure reason are scrubbed
  // of each secret resolved (a source may echo a header, or put the token in its next-page URL).
  const { scrub } = context.scrubber;
  // A wait for the rate budget is not a failed attempt (no request was sent): it leaves the loop
  // as a value, and becomes a deferral that keeps the attempts spent so far.
  type Attempt = { readonly value: T } | { readonly budgetWait: RateBudgetWaitError };
  const outcome = await retryWithBackoff<Attempt>(
    async () => {
      context.ensureOwned();
      try {
        return { value: scrub(await operation()) };
      } catch (error) {
        if (error instanceof RateBudgetWaitError) return { budgetWait: error };
        throw error;
      }
    },
    (error) => {
      const classification = connector.classify(error, deps.retry.now());
      return { ...classification, reason: scrub(classification.reason) };
    },
    ownedRetryDeps(context),
    {
      // Attempts spent by earlier deliveries that deferred this page count against its budget.
      attemptsUsed: context.message.attempts ?? 0,
      onRetry: ({ attempt, waitMs, classification }) => {
        deps.metrics.count(METRIC.retries, 1, { name: 'ErrorClass', value: classification.errorClass });
        context.log.info('retrying source request', { attempt, waitMs, reason: classification.reason });
      },
    },
  );
  // The attempt the source answered with a long wait is not spent either: a throttled page is
  // bounded by the progress budget, a failing one by its attempts. Failures before
  // the wait stay spent; the deferral carries them.
  if (outcome.kind === 'defer') return { ...outcome, attempts: outcome.attempts - 1 };
  if (outcome.kind !== 'ok') return outcome;
  if ('value' in outcome.value) return { ...outcome, value: outcome.value.value };
  const wait = outcome.value.budgetWait;
  return { kind: 'defer', untilMs: wait.until, reason: wait.message, attempts: outcome.attempts - 1 };
}
