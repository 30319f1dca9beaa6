import { type EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { DETAIL_TYPES, EVENT_SOURCE } from '../../events/details.js';
import { completenessWords } from '../../run/completeness.js';
import type { SyncRun } from '../../run/model.js';

/**
 * Run outcome detail types on the Harvester bus; the platform's notifier subscribes to them. A
 * succeeded run raises exactly one of the two `SyncRun Succeeded…` events (subscribe to the
 * prefix `SyncRun Succeeded` for every success).
 */
export const RUN_EVENT_TYPES = {
  failed: DETAIL_TYPES.runFailed,
  succeededWithErrors: DETAIL_TYPES.runSucceededWithErrors,
  succeeded: DETAIL_TYPES.runSucceeded,
} as const;

export { EVENT_SOURCE };

/** The event detail: a run summary a notifier can render without reading the table. */
export function runEventDetail(run: SyncRun) {
  return {
    runId: run.runId,
    sourceId: run.sourceId,
    mode: run.mode,
    state: run.state,
    processed: run.progress.processed,
    total: run.progress.total,
    errorCount: run.errorCount,
    ...(run.outcome ? { outcome: run.outcome } : {}),
    failure: run.failure,
    resume: run.resume,
    startedAt: run.startedAt,
    finishedAt: run.finishedAt,
    summary: eventSummary(run),
    ...(run.completeness ? { completeness: run.completeness } : {}),
    // Under its source: the path a source owner's IAM policy lets them read.
    link: `/sources/${encodeURIComponent(run.sourceId)}/runs/${encodeURIComponent(run.runId)}`,
  };
}

/** "485/500 processed, 15 dead letters filed": the outcome fixed at the run's end (the counts for a run ended before outcomes were kept). */
function eventSummary(run: SyncRun): string {
  const o = run.outcome;
  const short = completenessWords(run.completeness);
  if (!o)
    return `${run.progress.processed}${run.progress.total === null ? '' : `/${run.progress.total}`} processed, ${run.errorCount} in dead letters${short}`;
  const total = o.total === null || o.total === o.processed ? '' : `/${o.total}`;
  return `${o.processed}${total} processed, ${o.deadLetters} dead ${o.deadLetters === 1 ? 'letter' : 'letters'} filed${short}`;
}

/** Publishes run outcome events on the Harvester bus. */
export class RunEvents {
  constructor(
    private readonly events: EventBridgeClient,
    readonly busName: string,
  ) {}

  /** Puts the event for an ended run, if its outcome deserves one; returns the detail type sent. */
  async publishOutcome(run: SyncRun): Promise<string | undefined> {
    const detailType =
      run.state === 'failed'
        ? RUN_EVENT_TYPES.failed
        : run.state === 'succeeded'
          ? run.errorCount > 0
            ? RUN_EVENT_TYPES.succeededWithErrors
            : RUN_EVENT_TYPES.succeeded
          : undefined;
    if (!detailType) return undefined;
    const result = await this.events.send(
      new PutEventsCommand({
        Entries: [
          {
            EventBusName: this.busName,
            Source: EVENT_SOURCE,
            DetailType: detailType,
            Resources: [],
            Detail: JSON.stringify(runEventDetail(run)),
          },
        ],
      }),
    );
    if ((result.FailedEntryCount ?? 0) > 0) {
      throw new Error(
        `event bus refused the ${detailType} event: ${result.Entries?.[0]?.ErrorMessage ?? 'unknown'}`,
      );
    }
    return detailType;
  }
}
