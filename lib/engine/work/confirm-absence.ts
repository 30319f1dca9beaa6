import { stepProvenance } from '../sources/request-trail.js';
import type { StepContext } from '../step/context.js';
import { fetchById } from './fetch-by-id.js';

/**
 * What asking the source about one tombstone candidate came to. Only `gone` and `found` are
 * answers; the other two say the question is still open and must be asked again — never that the
 * entity is alive, and never that it is gone.
 */
export type Confirmation =
  /** The source says it no longer exists here (404/410, or answered with another record): tombstoned. */
  | { readonly kind: 'gone'; readonly tombstoned: boolean }
  /** The source answered with it: alive (stored again when it normalizes), marked seen. */
  | { readonly kind: 'found' }
  /** The request must wait longer than a worker may sleep (a `Retry-After`, the rate budget). */
  | { readonly kind: 'defer'; readonly untilMs: number; readonly reason: string; readonly attempts: number }
  /** The request failed for good (after its attempts, or a permanent error). */
  | {
      readonly kind: 'failed';
      readonly reason: string;
      readonly errorClass: 'transient' | 'permanent';
      readonly attempts: number;
    };

/**
 * Asks the source for one candidate and acts on a definite answer: tombstones it when gone,
 * stores it again and marks it seen when found. Never throws for the source's errors.
 */
export async function confirmAbsence(context: StepContext, entityId: string): Promise<Confirmation> {
  const { deps, run } = context;
  const outcome = await fetchById(context, entityId);
  context.ensureOwned();
  if (outcome.kind === 'defer') return outcome;
  if (outcome.kind === 'dead_letter') {
    const { reason, errorClass, attempts } = outcome;
    return { kind: 'failed', reason, errorClass, attempts };
  }
  if (outcome.value.kind === 'gone') {
    context.log.info('absence confirmed', { entityId, how: outcome.value.how });
    const tombstoned = await deps.items.tombstone(run.sourceId, entityId, run.runId, deps.clock.now());
    return { kind: 'gone', tombstoned };
  }
  const { normalized } = outcome.value;
  if (normalized.ok) {
    await deps.items.loadAll(
      run.sourceId,
      [normalized.entity],
      run.runId,
      deps.clock.now(),
      run.epoch,
      stepProvenance(context),
    );
  }
  // Found (valid, invalid or too large to store): alive, whatever became of the write.
  await deps.items.markSeen(run.sourceId, entityId, run.runId);
  return { kind: 'found' };
}
