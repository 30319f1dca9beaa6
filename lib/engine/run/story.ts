import { METRIC } from '../../observability/metrics.js';
import type { SyncRun } from '../../run/model.js';
import { PAGES_EVENT_EVERY, type RunEventInput } from '../../run/run-events.js';
import type { EngineDeps } from '../deps.js';

/*
 * When the engine tells a run's story (lib/run/run-events.ts): always after the transition's own
 * write won, so a delivery that lost its commit, its fence or its end tells nothing. Telling is
 * best effort: the story is for people, the run item is the truth, so an event that cannot be
 * written is logged and counted (`RunEventsLost`) and the run goes on.
 */

type RunRef = Pick<SyncRun, 'runId' | 'sourceId'>;

/** Appends `event` to the run's story; never throws. */
export async function tell(deps: EngineDeps, run: RunRef, event: RunEventInput): Promise<void> {
  try {
    const placed = await deps.story.append(run.runId, event);
    if (placed.kind === 'capped')
      deps.logger.debug('run story is full; event dropped', { runId: run.runId, type: event.type });
  } catch (error) {
    deps.metrics.count(METRIC.runEventsLost, 1, { name: 'EventType', value: event.type });
    deps.logger.warn('could not record a run event; the run goes on', {
      runId: run.runId,
      sourceId: run.sourceId,
      epoch: event.epoch,
      eventType: event.type,
      error: String(error),
    });
  }
}

/**
 * Tells of a chain's committed page when its number is a multiple of {@link PAGES_EVENT_EVERY}:
 * pages are told in bulk, never one event each.
 */
export async function tellPages(
  deps: EngineDeps,
  run: RunRef & Pick<SyncRun, 'epoch'>,
  chain: { partition: number | undefined; page: number; processed: number },
): Promise<void> {
  if (chain.page % PAGES_EVENT_EVERY !== 0) return;
  await tell(deps, run, {
    type: 'pages',
    epoch: run.epoch,
    at: deps.clock.now(),
    detail: {
      partition: chain.partition ?? null,
      throughPage: chain.page,
      pages: PAGES_EVENT_EVERY,
      processed: chain.processed,
    },
  });
}

/** Tells of an ended run's end, with the outcome fixed in it. */
export async function tellEnded(deps: EngineDeps, ended: SyncRun): Promise<void> {
  if (ended.state !== 'succeeded' && ended.state !== 'failed' && ended.state !== 'cancelled') return;
  const outcome = ended.outcome;
  await tell(deps, ended, {
    type: 'ended',
    epoch: ended.epoch,
    at: ended.finishedAt ?? deps.clock.now(),
    detail: {
      state: ended.state,
      failure: ended.failure?.reason ?? null,
      processed: outcome?.processed ?? ended.progress.processed,
      deadLetters: outcome?.deadLetters ?? ended.errorCount,
      total: outcome ? outcome.total : ended.progress.total,
    },
  });
}
