import type { z } from 'zod';
import { startRun } from '../../engine/index.js';
import { deadLetterEntryId } from '../../store/dead-letter-model.js';
import type { DeadLetterFilter } from '../../store/dead-letters.js';
import { DeadLetterNotFoundError } from '../../store/errors.js';
import { discardMatching } from '../dead-letter-triage.js';
import type { ApiDeps } from '../deps.js';
import { DeadLetterResolvedError } from '../errors.js';
import { listPage } from '../request.js';
import { defineRoute, type Route } from '../route.js';
import {
  BulkDiscardBodySchema,
  BulkDiscardResultSchema,
  DeadLetterDetailSchema,
  type DeadLetterFilterSchema,
  DeadLetterPageSchema,
  DeadLetterPathSchema,
  DiscardBodySchema,
  ListDeadLettersQuerySchema,
  RetryDeadLettersBodySchema,
} from '../schemas/dead-letters.js';
import { RunViewSchema } from '../schemas/runs.js';
import { SourcePathSchema } from '../schemas/sources.js';
import { runLocation, toDeadLetterDetail, toDeadLetterView, toRunView, triggerOf } from '../views.js';

function notFound(sourceId: string, entryId: string): DeadLetterNotFoundError {
  return new DeadLetterNotFoundError(
    `no dead letter ${entryId} in source ${sourceId}: never recorded, or a retry resolved it`,
    { sourceId, entryId },
  );
}

/**
 * Why a discard found no entry. An item entry whose entity is stored now was resolved by the run
 * that loaded it (retry-failed deletes the entries it resolves): 410, naming that run. Anything
 * else (a page entry leaves no trace, an entity never stored): 404.
 */
async function nothingToDiscard(deps: ApiDeps, sourceId: string, entryId: string): Promise<Error> {
  const entityId = entryId.startsWith('item#') ? entryId.slice('item#'.length) : undefined;
  const item =
    entityId !== undefined && deadLetterEntryId('item', entityId) === entryId
      ? await deps.items.get(sourceId, entityId)
      : undefined;
  if (!item || item.tombstonedAt !== undefined) return notFound(sourceId, entryId);
  const runId = item.provenance?.runId ?? item.runId;
  const mode = item.provenance?.mode ? `${item.provenance.mode} ` : '';
  return new DeadLetterResolvedError(
    entryId,
    runId,
    `dead letter ${entryId} of source ${sourceId} is already resolved: ${mode}run ${runId} stored entity ${entityId} (version ${item.version}) at ${new Date(item.syncedAt).toISOString()}, and a run that loads an entity removes its dead letter; nothing is left to discard`,
  );
}

/** The store's filter from a request's (`all: true` is no criterion: every entry). */
function filterOf({
  runId,
  errorClass,
  reasonMatch,
}: z.output<typeof DeadLetterFilterSchema>): DeadLetterFilter {
  return {
    ...(runId !== undefined ? { runId } : {}),
    ...(errorClass !== undefined ? { errorClass } : {}),
    ...(reasonMatch !== undefined ? { reasonMatch } : {}),
  };
}

/** Dead letters: triage listing, one entry in full, discard, and "retry failed". */
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
      const listing = `dead-letters:${params.sourceId}:${query.runId ?? ''}:${query.errorClass ?? ''}:${query.state}${query.reasonMatch === undefined ? '' : `:${JSON.stringify(query.reasonMatch)}`}`;
      const page = await listPage(deps.cursors, listing, query.cursor, (cursor) =>
        deps.deadLetters.list(params.sourceId, {
          limit: query.limit,
          ...(cursor ? { cursor } : {}),
          ...(query.runId ? { runId: query.runId } : {}),
          ...(query.errorClass ? { errorClass: query.errorClass } : {}),
          ...(query.reasonMatch ? { reasonMatch: query.reasonMatch } : {}),
          state: query.state,
        }),
      );
      return {
        status: 200,
        body: { items: page.items.map(toDeadLetterView), nextCursor: page.nextCursor },
      };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/sources/{sourceId}/dead-letters/{entryId}',
    operationId: 'getDeadLetter',
    summary: 'One dead letter in full',
    description:
      'The whole reason, the kept payload (parsed, numbers exact), attempts, state and history (first and last failure, discard). Discarded entries are shown too.',
    tag: 'dead-letters',
    params: DeadLetterPathSchema,
    responses: { 200: { description: 'The dead letter', schema: DeadLetterDetailSchema } },
    problems: [404],
    async handle({ params, deps }) {
      await deps.sources.require(params.sourceId);
      const entry = await deps.deadLetters.get(params.sourceId, params.entryId);
      if (!entry) throw notFound(params.sourceId, params.entryId);
      return { status: 200, body: toDeadLetterDetail(entry) };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/sources/{sourceId}/dead-letters/{entryId}/discard',
    operationId: 'discardDeadLetter',
    summary: 'Give up on a dead letter, keeping it as an audit record',
    description:
      "The entry stays with state `discarded`, the caller's IAM identity, the time and the reason; it no longer counts in its run's dead letters, lists as open or takes part in retry-failed. A new failure of the same item or page opens it again. 409 when it is discarded already; 410 (naming `runId`) when a run has loaded the entity since, which resolved the entry; 404 when there is no such entry (never recorded, or a resolved page entry, which leaves no trace).",
    tag: 'dead-letters',
    params: DeadLetterPathSchema,
    body: DiscardBodySchema,
    responses: { 200: { description: 'Discarded', schema: DeadLetterDetailSchema } },
    problems: [404, 409, 410],
    async handle({ params, body, deps, request }) {
      await deps.sources.require(params.sourceId);
      const entry = await deps.deadLetters.discard(params.sourceId, params.entryId, {
        at: deps.clock.now(),
        by: request.caller ?? null,
        reason: body.reason,
      });
      if (!entry) throw await nothingToDiscard(deps, params.sourceId, params.entryId);
      return { status: 200, body: toDeadLetterDetail(entry) };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/sources/{sourceId}/dead-letters/discard',
    operationId: 'discardDeadLetters',
    summary: 'Give up on every open dead letter matching a filter',
    description:
      "Triage at volume: discards the source's open entries whose last failure was in `runId`, of `errorClass`, whose reason contains `reasonMatch` (criteria combine), or `all: true`; an empty filter is a 400. Each entry is kept as `discard` does (state `discarded`, the caller's IAM identity, the time, `reason`), by a conditional write: an entry discarded, resolved or failed again differently since it was read is `skipped`. One call does bounded work (at most 200 entries; a `dryRun` counts up to 1,000 without writing): while `nextCursor` is not null, call again with it and the same filter.",
    tag: 'dead-letters',
    params: SourcePathSchema,
    body: BulkDiscardBodySchema,
    responses: { 200: { description: 'What this call did', schema: BulkDiscardResultSchema } },
    problems: [404],
    async handle({ params, body, deps, request }) {
      await deps.sources.require(params.sourceId);
      const filter = filterOf(body.filter);
      const discard = { at: deps.clock.now(), by: request.caller ?? null, reason: body.reason };
      const outcome = await discardMatching(deps, params.sourceId, filter, {
        ...(body.dryRun ? {} : { discard }),
        ...(body.cursor !== undefined ? { cursor: body.cursor } : {}),
      });
      if (!body.dryRun && outcome.matched > 0)
        deps.logger.info('dead letters discarded by filter', {
          sourceId: params.sourceId,
          filter: body.filter,
          discarded: outcome.discarded,
          skipped: outcome.skipped,
          by: discard.by,
        });
      return { status: 200, body: { dryRun: body.dryRun, ...outcome } };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/sources/{sourceId}/dead-letters/retry',
    operationId: 'retryDeadLetters',
    summary: 'Retry failed: start a dlq_retry run',
    description:
      "Re-fetches the source's open dead letters (items by id, pages by cursor), or with a `filter` only those matching it (the filter of a bulk discard; kept in the run's params); resolved entries leave dead_letters. 409 (naming `activeRunId`) while a run is active.",
    tag: 'dead-letters',
    params: SourcePathSchema,
    body: RetryDeadLettersBodySchema,
    responses: { 202: { description: 'Queued', schema: RunViewSchema } },
    problems: [404, 409],
    async handle({ params, body, deps, request }) {
      const filter = body?.filter && !body.filter.all ? filterOf(body.filter) : undefined;
      const run = await startRun(deps, {
        sourceId: params.sourceId,
        mode: 'dlq_retry',
        trigger: triggerOf(request),
        ...(filter ? { deadLetterFilter: filter } : {}),
      });
      return {
        status: 202,
        body: toRunView(run, deps.clock.now()),
        headers: { location: runLocation(run) },
      };
    },
  }),
];
