import { startRun } from '../../engine/index.js';
import type { ApiDeps } from '../deps.js';
import { listPage } from '../request.js';
import { defineRoute, type Route } from '../route.js';
import {
  EmptyBodySchema,
  ListAllRunsQuerySchema,
  ListRunsQuerySchema,
  RunPageSchema,
  RunPathSchema,
  RunViewSchema,
  StartRunBodySchema,
} from '../schemas/runs.js';
import { SourcePathSchema } from '../schemas/sources.js';
import { runView, toRunView, triggerOf } from '../views.js';

/** Runs: start, read, list, cancel. */
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
        headers: { location: `/runs/${run.runId}` },
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
    path: '/runs/{runId}',
    operationId: 'getRun',
    summary: 'Get a run',
    description: 'State, "N/M processed, K in DLQ", heartbeat age, checkpoint, resume verdict and failure.',
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
    summary: 'Cancel a run',
    description:
      'Cancelled is terminal: the worker stops within one heartbeat, pending deferral schedules are deleted, and the checkpoint is never resumed. 409 when the run already ended.',
    tag: 'runs',
    params: RunPathSchema,
    body: EmptyBodySchema,
    responses: { 200: { description: 'Cancelled', schema: RunViewSchema } },
    problems: [404, 409],
    async handle({ params, deps }) {
      const run = await deps.lifecycle.cancel(params.runId, deps.clock.now());
      await deleteDeferrals(deps, params.runId);
      return { status: 200, body: await runView(deps, run) };
    },
  }),
];

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
