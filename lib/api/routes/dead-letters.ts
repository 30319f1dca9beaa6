import { startRun } from '../../engine/index.js';
import { listPage } from '../request.js';
import { defineRoute, type Route } from '../route.js';
import { DeadLetterPageSchema, ListDeadLettersQuerySchema } from '../schemas/dead-letters.js';
import { EmptyBodySchema, RunViewSchema } from '../schemas/runs.js';
import { SourcePathSchema } from '../schemas/sources.js';
import { toDeadLetterView, toRunView, triggerOf } from '../views.js';

/** Dead letters: triage listing and "retry failed". */
export const deadLetterRoutes: Route[] = [
  defineRoute({
    method: 'GET',
    path: '/sources/{sourceId}/dead-letters',
    operationId: 'listDeadLetters',
    summary: "List a source's open dead letters",
    tag: 'dead-letters',
    params: SourcePathSchema,
    query: ListDeadLettersQuerySchema,
    responses: { 200: { description: 'A page of dead letters', schema: DeadLetterPageSchema } },
    problems: [404],
    async handle({ params, query, deps }) {
      await deps.sources.require(params.sourceId);
      const listing = `dead-letters:${params.sourceId}:${query.runId ?? ''}:${query.errorClass ?? ''}`;
      const page = await listPage(deps.cursors, listing, query.cursor, (cursor) =>
        deps.deadLetters.list(params.sourceId, {
          limit: query.limit,
          ...(cursor ? { cursor } : {}),
          ...(query.runId ? { runId: query.runId } : {}),
          ...(query.errorClass ? { errorClass: query.errorClass } : {}),
        }),
      );
      return {
        status: 200,
        body: { items: page.items.map(toDeadLetterView), nextCursor: page.nextCursor },
      };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/sources/{sourceId}/dead-letters/retry',
    operationId: 'retryDeadLetters',
    summary: 'Retry failed: start a dlq_retry run',
    description:
      "Re-fetches the source's open dead letters (items by id, pages by cursor); resolved entries leave dead_letters. 409 (naming `activeRunId`) while a run is active.",
    tag: 'dead-letters',
    params: SourcePathSchema,
    body: EmptyBodySchema,
    responses: { 202: { description: 'Queued', schema: RunViewSchema } },
    problems: [404, 409],
    async handle({ params, deps, request }) {
      const run = await startRun(deps, {
        sourceId: params.sourceId,
        mode: 'dlq_retry',
        trigger: triggerOf(request),
      });
      return {
        status: 202,
        body: toRunView(run, deps.clock.now()),
        headers: { location: `/runs/${run.runId}` },
      };
    },
  }),
];
