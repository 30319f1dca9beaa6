import { startRun, tell, tellEnded } from '../../engine/index.js';
import type { SyncRun } from '../../run/model.js';
import { RunNotFoundError } from '../../store/errors.js';
import type { ApiDeps } from '../deps.js';
import { listPage } from '../request.js';
import { defineRoute, type Route } from '../route.js';
import {
  EmptyBodySchema,
  ListAllRunsQuerySchema,
  ListRunsQuerySchema,
  RunEventPageSchema,
  RunEventsQuerySchema,
  RunPageSchema,
  RunPathSchema,
  RunViewSchema,
  SourceRunPathSchema,
  StartRunBodySchema,
} from '../schemas/runs.js';
import { SourcePathSchema } from '../schemas/sources.js';
import { runLocation, runView, toRunView, triggerOf } from '../views.js';

const RUN_VIEW_DESCRIPTION =
  'State, "N/~M processed, K in DLQ" while active and, once ended, its outcome fixed at its end ("485/500 processed, 15 dead letters filed") with the live dead-letter count beside it; heartbeat age, checkpoint, resume verdict and failure.';
const CANCEL_DESCRIPTION =
  'Cancelled is terminal: the worker stops within one heartbeat, pending deferral schedules are deleted, and the checkpoint is never resumed. 409 when the run already ended.';

/**
 * Runs: start, read, list, cancel. A run is read and cancelled under its source
 * (`/sources/{sourceId}/runs/{runId}`), so an IAM policy on `/sources/<id>/*` covers every run of
 * that source and none of another's. The `/runs` routes reach across sources and are for
 * administrators: an owner's policy grants none of them.
 */
export const runRoutes: Route[] = [
  defineRoute({
    method: 'POST',
    path: '/sources/{sourceId}/runs',
    operationId: 'startRun',
    summary: 'Start a run',
    description:
      'Queues the run and answers at once; workers carry it. 409 (naming `activeRunId`) while another run of the source is active.',
    tag: 'runs',
    params: SourcePathSchema,
    body: StartRunBodySchema,
    responses: { 202: { description: 'Queued', schema: RunViewSchema } },
    problems: [404, 409],
    async handle({ params, body, deps, request }) {
      const run = await startRun(deps, {
        sourceId: params.sourceId,
        mode: body.mode,
        trigger: triggerOf(request),
        ...(body.partitions !== undefined ? { partitions: body.partitions } : {}),
      });
      return {
        status: 202,
        body: toRunView(run, deps.clock.now()),
        headers: { location: runLocation(run) },
      };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/sources/{sourceId}/runs',
    operationId: 'listRuns',
    summary: "List a source's runs, newest first",
    tag: 'runs',
    params: SourcePathSchema,
    query: ListRunsQuerySchema,
    responses: { 200: { description: 'A page of runs', schema: RunPageSchema } },
    problems: [404],
    async handle({ params, query, deps }) {
      await deps.sources.require(params.sourceId);
      const page = await listPage(deps.cursors, `runs:${params.sourceId}`, query.cursor, (cursor) =>
        deps.runs.listBySource(params.sourceId, { limit: query.limit, ...(cursor ? { cursor } : {}) }),
      );
      const items = await Promise.all(page.items.map((run) => runView(deps, run)));
      return { status: 200, body: { items, nextCursor: page.nextCursor } };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/runs',
    operationId: 'listAllRuns',
    summary: 'List runs of every source, optionally in one state',
    description:
      'Scans the runs table: each page holds up to `limit` runs (newest first within the page); pages are in no particular order. For "what is running" or "what failed" across sources.',
    tag: 'runs',
    query: ListAllRunsQuerySchema,
    responses: { 200: { description: 'A page of runs', schema: RunPageSchema } },
    problems: [],
    async handle({ query, deps }) {
      const page = await listPage(deps.cursors, `runs:*:${query.state ?? ''}`, query.cursor, (cursor) =>
        deps.runs.listAcrossSources({
          limit: query.limit,
          ...(query.state ? { state: query.state } : {}),
          ...(cursor ? { cursor } : {}),
        }),
      );
      const items = await Promise.all(page.items.map((run) => runView(deps, run)));
      return { status: 200, body: { items, nextCursor: page.nextCursor } };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/sources/{sourceId}/runs/{runId}',
    operationId: 'getSourceRun',
    summary: 'Get a run of a source',
    description: `${RUN_VIEW_DESCRIPTION} 404 when the source has no such run, whether or not another source has.`,
    tag: 'runs',
    params: SourceRunPathSchema,
    responses: { 200: { description: 'The run', schema: RunViewSchema } },
    problems: [404],
    async handle({ params, deps }) {
      const run = await requireRunOf(deps, params.sourceId, params.runId);
      return { status: 200, body: await runView(deps, run) };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/sources/{sourceId}/runs/{runId}/events',
    operationId: 'listRunEvents',
    summary: "A run's story: its transitions, oldest first",
    description:
      'What happened to the run, as it happened: `started`, `pages` (every 10th page of each chain), `deferred`, `waiting`, `resumed` (with the verdict and the new epoch), `partition_planned`, `partition_ended`, `cancelled`, `ended` (with the outcome fixed at its end). Each event carries its place (`seq`), time, epoch and a typed `detail`. A story keeps at most 500 events (the last place is kept for `ended`; the ones that found no room are counted in `dropped`) and is kept as long as the run. A run that started before stories were kept has none: an empty page. 404 when the source has no such run.',
    tag: 'runs',
    params: SourceRunPathSchema,
    query: RunEventsQuerySchema,
    responses: { 200: { description: 'A page of the run’s events', schema: RunEventPageSchema } },
    problems: [404],
    async handle({ params, query, deps }) {
      let dropped = 0;
      // The cursor is checked first (a forged one is a 400 whatever the ids), then the run.
      const page = await listPage(deps.cursors, `events:${params.runId}`, query.cursor, async (cursor) => {
        await requireRunOf(deps, params.sourceId, params.runId);
        const story = await deps.story.list(params.runId, { limit: query.limit, cursor });
        dropped = story.dropped;
        return story;
      });
      return { status: 200, body: { ...page, dropped } };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/sources/{sourceId}/runs/{runId}/cancel',
    operationId: 'cancelSourceRun',
    summary: 'Cancel a run of a source',
    description: `${CANCEL_DESCRIPTION} 404 when the source has no such run, whether or not another source has.`,
    tag: 'runs',
    params: SourceRunPathSchema,
    body: EmptyBodySchema,
    responses: { 200: { description: 'Cancelled', schema: RunViewSchema } },
    problems: [404, 409],
    async handle({ params, deps, request }) {
      await requireRunOf(deps, params.sourceId, params.runId);
      return { status: 200, body: await cancelRun(deps, params.runId, request.caller) };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/runs/{runId}',
    operationId: 'getRun',
    summary: 'Get a run of any source (administrators)',
    description: `${RUN_VIEW_DESCRIPTION} Reaches every source's runs: a source owner reads \`/sources/{sourceId}/runs/{runId}\`.`,
    tag: 'runs',
    params: RunPathSchema,
    responses: { 200: { description: 'The run', schema: RunViewSchema } },
    problems: [404],
    async handle({ params, deps }) {
      return { status: 200, body: await runView(deps, await deps.runs.require(params.runId)) };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/runs/{runId}/cancel',
    operationId: 'cancelRun',
    summary: 'Cancel a run of any source (administrators)',
    description: `${CANCEL_DESCRIPTION} Reaches every source's runs: a source owner cancels with \`/sources/{sourceId}/runs/{runId}/cancel\`.`,
    tag: 'runs',
    params: RunPathSchema,
    body: EmptyBodySchema,
    responses: { 200: { description: 'Cancelled', schema: RunViewSchema } },
    problems: [404, 409],
    async handle({ params, deps, request }) {
      return { status: 200, body: await cancelRun(deps, params.runId, request.caller) };
    },
  }),
];

/**
 * The run, when it belongs to `sourceId`. A run of another source is answered exactly like a run
 * that does not exist, so a caller allowed one source learns nothing about another's run ids.
 */
async function requireRunOf(deps: ApiDeps, sourceId: string, runId: string): Promise<SyncRun> {
  const run = await deps.runs.get(runId);
  if (!run || run.sourceId !== sourceId)
    throw new RunNotFoundError(`run ${runId} not found in source ${sourceId}`, { runId, sourceId });
  return run;
}

async function cancelRun(deps: ApiDeps, runId: string, caller: string | undefined) {
  const run = await deps.lifecycle.cancel(runId, deps.clock.now());
  await tell(deps, run, {
    type: 'cancelled',
    epoch: run.epoch,
    at: run.finishedAt ?? deps.clock.now(),
    detail: { by: caller ?? null },
  });
  await tellEnded(deps, run);
  await deleteDeferrals(deps, runId);
  return runView(deps, run);
}

/**
 * Deletes a cancelled run's pending deferral schedules. The cancel itself already holds: should
 * Scheduler fail here, a leftover schedule fires into a cancelled run, whose message the worker
 * drops, and then deletes itself; so the failure is logged, not answered as a 500.
 */
async function deleteDeferrals(deps: ApiDeps, runId: string): Promise<void> {
  try {
    const deleted = (await deps.deferrals?.deleteFor(runId)) ?? [];
    if (deleted.length > 0)
      deps.logger.info('deleted deferral schedules of a cancelled run', { runId, deleted });
  } catch (error) {
    deps.logger.warn('could not delete deferral schedules of a cancelled run', {
      runId,
      error: String(error),
    });
  }
}
