import type { ErrorClass } from './errors.js';

/**
 * What one retried operation came to. The loop never sleeps past the inline cap: a longer wait
 * becomes `defer`, and the engine re-enqueues the page for then.
 */
export type RetryOutcome<T> =
  | { readonly kind: 'ok'; readonly value: T; readonly attempts: number }
  | { readonly kind: 'defer'; readonly untilMs: number; readonly reason: string; readonly attempts: number }
  | {
      readonly kind: 'dead_letter';
      readonly errorClass: ErrorClass;
      readonly reason: string;
      readonly attempts: number;
      readonly error: unknown;
    };

/** The loop's view of time and chance, injected so tests are fast and deterministic. */
export interface RetryDeps {
  now(): number;
  sleep(ms: number): Promise<void>;
  /** A number in [0, 1). */
  random(): number;
}

/** Real time and Math.random. */
export const realRetryDeps: RetryDeps = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  random: Math.random,
};
