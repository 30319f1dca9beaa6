import type { ErrorClass } from '../retry/errors.js';

/**
 * Which dead letters a triage command means (a bulk discard, a listing, a filtered retry-failed
 * run): those whose last failure was in `runId`, of one error class, and whose reason contains
 * `reasonMatch` (case-sensitive). Each given field narrows; none given means every entry.
 */
export interface DeadLetterFilter {
  readonly runId?: string;
  readonly errorClass?: ErrorClass;
  readonly reasonMatch?: string;
}
