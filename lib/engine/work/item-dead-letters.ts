import { isPartitioned } from '../../run/partitions.js';
import type { FailureRecord, FiledBy } from '../../store/dead-letters.js';
import type { StepContext } from '../step/context.js';

/*
 * A stored entity ends its item dead letter (page-work's `loadEntities`), which costs a read of
 * dead_letters per page. The run knows when there is nothing to read: its flag
 * (`SyncRun.itemDeadLetters`) says whether its source had open item entries when it started, and
 * the run sets it before it files one itself. A page of a run whose flag is false skips the read.
 */

/** The steps that filed (or marked their run for) an item dead letter: their own loads look too. */
const marked = new WeakSet<StepContext>();

/**
 * Whether the page must look for item dead letters its loads resolve: unless the run's flag says
 * the source had none and the run filed none. A partitioned run always looks: its chains run at
 * once, so one window may file an entry while another, its flag read before, loads the entity.
 */
export function mayResolveItemDeadLetters(context: StepContext): boolean {
  const { run } = context;
  return run.itemDeadLetters !== false || isPartitioned(run) || marked.has(context);
}

/**
 * Files an item dead letter of the step, after marking its run (once per step) as holding some.
 * With `filer`, only when no window next to the step's (or, for a tail pass, no pass of the run)
 * filed it first; returns whether this filing counts.
 */
export async function fileItemDeadLetter(
  context: StepContext,
  failure: Omit<FailureRecord, 'kind'>,
  filer?: FiledBy,
): Promise<boolean> {
  const { deps, run } = context;
  if (run.itemDeadLetters === false && !marked.has(context)) {
    await deps.runs.markItemDeadLetters(run.runId, {
      runId: run.runId,
      partition: context.message.partition,
    });
    marked.add(context);
  }
  if (filer) return deps.deadLetters.recordUnlessFiledBy({ ...failure, kind: 'item' }, filer);
  await deps.deadLetters.record({ ...failure, kind: 'item' });
  return true;
}
