import pLimit from 'p-limit';
import type { z } from 'zod';
import { nextFireTime } from '../queue/schedule-expression.js';
import { scheduleName } from '../queue/source-schedules.js';
import type { SourceRecord } from '../store/sources.js';
import type { RunSummary } from '../store/sync-runs.js';
import type { ApiDeps } from './deps.js';
import { fixedFigures } from './run-summary.js';
import { iso } from './schemas/common.js';
import type { SourceViewSchema } from './schemas/sources.js';
import { toSourceView } from './views.js';

type SourceView = z.infer<typeof SourceViewSchema>;

/** Sources of a listing page read at once (each costs a runs query and a GetSchedule per schedule). */
const LISTING_CONCURRENCY = 4;

function summary(run: RunSummary | null): SourceView['lastRun'] {
  if (!run) return null;
  return {
    runId: run.runId,
    state: run.state,
    mode: run.mode,
    createdAt: iso(run.createdAt)!,
    finishedAt: iso(run.finishedAt),
    outcome: run.outcome ? fixedFigures(run.outcome) : null,
  };
}

/**
 * A source as `GET /sources/{id}` answers it: the stored definition, each schedule's state in
 * Scheduler and next fire time (computed from its expression; none while paused), and the
 * source's last run and last success.
 */
export async function sourceView(deps: ApiDeps, source: SourceRecord): Promise<SourceView> {
  const now = deps.clock.now();
  const [recent, schedules] = await Promise.all([
    deps.runs.recentOf(source.sourceId),
    Promise.all(
      source.schedules.map(async (schedule, index) => {
        const held = await deps.schedules.describe(scheduleName(source.sourceId, index));
        const state = held ? (held.state === 'DISABLED' ? 'DISABLED' : 'ENABLED') : 'MISSING';
        const next =
          state === 'ENABLED' ? nextFireTime(schedule.expression, { now, since: held!.since }) : undefined;
        return { state, nextFireAt: iso(next) } as const;
      }),
    ),
  ]);
  const view = toSourceView(source);
  return {
    ...view,
    schedules: view.schedules.map((s, i) => ({ ...s, ...schedules[i] })),
    lastRun: summary(recent.last),
    lastSuccess: summary(recent.lastSuccess),
  };
}

/** {@link sourceView} for a page of sources, a few at a time. */
export function sourceViews(deps: ApiDeps, sources: readonly SourceRecord[]): Promise<SourceView[]> {
  const limit = pLimit(LISTING_CONCURRENCY);
  return Promise.all(sources.map((source) => limit(() => sourceView(deps, source))));
}
