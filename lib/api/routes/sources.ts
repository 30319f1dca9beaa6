import { parseConnectorConfig } from '../../connectors/registry.js';
import { stableHash } from '../../run/hash.js';
import { SourceNotFoundError } from '../../store/errors.js';
import { unboundOriginProblems } from '../binding-guard.js';
import { RawSecretError, SourcePolicyError } from '../errors.js';
import { listPage } from '../request.js';
import { defineRoute, type Route } from '../route.js';
import { EmptyBodySchema } from '../schemas/runs.js';
import {
  DeletedSourceSchema,
  ListSourcesQuerySchema,
  PutSchedulesBodySchema,
  PutSourceBodySchema,
  SourcePageSchema,
  SourcePathSchema,
  SourceViewSchema,
} from '../schemas/sources.js';
import { rawSecretFields } from '../secret-guard.js';
import { runSourceCheck, sourceTestResultOf } from '../source-check.js';
import { STRICT_SOURCE_GUARD, sourcePolicyProblems } from '../source-guard.js';
import { SourceTestResultSchema } from '../source-test.js';
import { sourceView, sourceViews } from '../source-view.js';
import { setSourcePaused, writeSchedules, writeSource } from '../source-writes.js';

/** Sources: create or replace, read, list, delete. */
export const sourceRoutes: Route[] = [
  defineRoute({
    method: 'PUT',
    path: '/sources/{sourceId}',
    operationId: 'putSource',
    summary: 'Create or replace a source',
    description:
      "Validates the config with the connector's schema, stores it with its hash, then reconciles the source's schedules; if Scheduler refuses them, the source and its schedules are put back as they were. Schedules are replaced as a whole; omitting them removes them (`PUT /sources/{sourceId}/schedules` changes them alone). 201 when created, 200 when replaced.",
    tag: 'sources',
    params: SourcePathSchema,
    body: PutSourceBodySchema,
    responses: {
      200: { description: 'Replaced', schema: SourceViewSchema },
      201: { description: 'Created', schema: SourceViewSchema },
    },
    problems: [],
    async handle({ params, body, deps }) {
      const config = parseConnectorConfig(body.connector, body.config) as Record<string, unknown>;
      const secrets = rawSecretFields(config);
      if (secrets.length > 0) throw new RawSecretError(secrets);
      const refused = await sourcePolicyProblems(
        params.sourceId,
        config,
        deps.sourceGuard ?? STRICT_SOURCE_GUARD,
      );
      refused.push(...(await unboundOriginProblems(deps, params.sourceId, config)));
      if (refused.length > 0) throw new SourcePolicyError(refused);
      // Signed only once every check passed: a MAC says "the API accepted this config".
      const configMac = await deps.trust.signConfig(params.sourceId, body.connector, config);
      const { source, created } = await writeSource(
        deps,
        {
          sourceId: params.sourceId,
          connector: body.connector,
          config,
          schedules: body.schedules,
          configHash: stableHash({ connector: body.connector, config }),
          configMac,
        },
        deps.clock.now(),
      );
      return {
        status: created ? 201 : 200,
        body: await sourceView(deps, source),
        ...(created ? { headers: { location: `/sources/${encodeURIComponent(source.sourceId)}` } } : {}),
      };
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/sources/{sourceId}/schedules',
    operationId: 'putSourceSchedules',
    summary: "Replace a source's schedules alone",
    description:
      'The connector config stays as it is (and so does its hash: interrupted runs still resume). Replaces the whole set; `[]` removes every schedule. If Scheduler refuses them, the source and its schedules are put back as they were.',
    tag: 'sources',
    params: SourcePathSchema,
    body: PutSchedulesBodySchema,
    responses: { 200: { description: 'The source with its new schedules', schema: SourceViewSchema } },
    problems: [404],
    async handle({ params, body, deps }) {
      const source = await writeSchedules(deps, params.sourceId, body.schedules, deps.clock.now());
      return { status: 200, body: await sourceView(deps, source) };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/sources/{sourceId}/test',
    operationId: 'testSource',
    summary: 'Check the connection: fetch the first page once',
    description:
      "Fetches the first page with the source's real credentials, as a run would (no retries, nothing stored, no run started), and reports whether the credentials were accepted, the rate budget the source reports, and one normalized sample entity. 200 whether or not the check passed: see `ok` and `problem`. Bounded: the check gives the source at most 5 s (budget wait included) and spends the credential's rate budget like a run's request; at most 2 checks of one source run at once, a third answers 429 with `Retry-After` (as does a check while the stack runs its most checks at once). 502 when the check function failed.",
    tag: 'sources',
    params: SourcePathSchema,
    body: EmptyBodySchema,
    responses: { 200: { description: 'The result of the check', schema: SourceTestResultSchema } },
    problems: [404, 429, 502],
    async handle({ params, deps }) {
      // On AWS the check function runs it (the API holds no secret); locally, this process.
      const answer = deps.sourceCheck
        ? await deps.sourceCheck(params.sourceId)
        : await runSourceCheck(deps, params.sourceId);
      return { status: 200, body: sourceTestResultOf(params.sourceId, answer) };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/sources',
    operationId: 'listSources',
    summary: 'List sources',
    tag: 'sources',
    query: ListSourcesQuerySchema,
    responses: { 200: { description: 'A page of sources', schema: SourcePageSchema } },
    problems: [],
    async handle({ query, deps }) {
      const page = await listPage(deps.cursors, 'sources', query.cursor, (cursor) =>
        deps.sources.list({ limit: query.limit, ...(cursor ? { cursor } : {}) }),
      );
      return {
        status: 200,
        body: { items: await sourceViews(deps, page.items), nextCursor: page.nextCursor },
      };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/sources/{sourceId}',
    operationId: 'getSource',
    summary: 'Get a source',
    tag: 'sources',
    params: SourcePathSchema,
    responses: { 200: { description: 'The source', schema: SourceViewSchema } },
    problems: [404],
    async handle({ params, deps }) {
      return { status: 200, body: await sourceView(deps, await deps.sources.require(params.sourceId)) };
    },
  }),
  ...(['pause', 'resume'] as const).map((action) =>
    defineRoute({
      method: 'POST',
      path: `/sources/{sourceId}/${action}`,
      operationId: `${action}Source`,
      summary: action === 'pause' ? "Pause a source's schedules" : "Resume a source's schedules",
      description:
        action === 'pause'
          ? 'Every Scheduler schedule of the source is set DISABLED (the local runtime honours it too), and stays so through later source writes until resumed. Runs already started go on; runs started by hand are not affected. Pausing a paused source changes nothing.'
          : 'Every Scheduler schedule of the source is set ENABLED again; a `rate(...)` counts its periods from now. Resuming a running source changes nothing.',
      tag: 'sources',
      params: SourcePathSchema,
      body: EmptyBodySchema,
      responses: { 200: { description: 'The source, with its schedules’ state', schema: SourceViewSchema } },
      problems: [404],
      async handle({ params, deps }) {
        const source = await setSourcePaused(deps, params.sourceId, action === 'pause');
        return { status: 200, body: await sourceView(deps, source) };
      },
    }),
  ),
  defineRoute({
    method: 'DELETE',
    path: '/sources/{sourceId}',
    operationId: 'deleteSource',
    summary: 'Delete a source, its schedules, runs and dead letters',
    description:
      'Refused with 409 (naming `activeRunId`) while a run is active. Deletes the source, its schedules, its runs and its dead letters, so a source created later under the same id starts with no history; the harvested items are kept (they are the data, not the history). Answers what it deleted.',
    tag: 'sources',
    params: SourcePathSchema,
    responses: { 200: { description: 'Deleted; counts of what went with it', schema: DeletedSourceSchema } },
    problems: [404, 409],
    async handle({ params, deps }) {
      try {
        await deps.sources.delete(params.sourceId);
      } catch (error) {
        // A source already gone may still have schedules (a delete that failed half-way): sweep them.
        if (error instanceof SourceNotFoundError) await deps.schedules.remove(params.sourceId);
        throw error;
      }
      const schedules = await deps.schedules.remove(params.sourceId);
      // The stories first: they are found through the runs.
      await deps.story.deleteAllOf(params.sourceId);
      const runs = await deps.runs.deleteAllOf(params.sourceId);
      const deadLetters = await deps.deadLetters.deleteAllOf(params.sourceId);
      return {
        status: 200,
        body: {
          sourceId: params.sourceId,
          deleted: { schedules: schedules.length, runs, deadLetters },
          itemsKept: true,
        },
      };
    },
  }),
];
