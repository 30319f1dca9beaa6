import { ItemNotFoundError } from '../../store/errors.js';
import { explainItem } from '../item-explain.js';
import { toItemView } from '../item-views.js';
import { listPage } from '../request.js';
import { defineRoute, type Route } from '../route.js';
import { iso } from '../schemas/common.js';
import {
  ItemExplanationSchema,
  ItemPageSchema,
  ItemPathSchema,
  ItemViewSchema,
  ListItemsQuerySchema,
} from '../schemas/items.js';
import { SourcePathSchema } from '../schemas/sources.js';

/**
 * How far before a change listing's start the next poll should begin: a write is stamped just
 * before it lands and reaches the change index a moment later (eventually consistent), so a
 * poll can miss a write stamped shortly before it started. One minute covers both by far;
 * re-reading that minute is harmless (docs/items.md).
 */
export const CHANGE_POLL_OVERLAP_MS = 60_000;

/** Items: what a source's runs stored, and why a row is as it is. */
export const itemRoutes: Route[] = [
  defineRoute({
    method: 'GET',
    path: '/sources/{sourceId}/items',
    operationId: 'listItems',
    summary: "List a source's stored entities, or those changed since a time",
    description:
      'Without `changedSince`: every live entity in entity-id order, each exactly once even while a run writes. With `changedSince`: entities stored with new content or tombstoned at or after it, oldest change first (the `byChange` index), tombstones included unless `includeTombstoned=false`; poll again from `nextChangedSince` (docs/items.md).',
    tag: 'items',
    params: SourcePathSchema,
    query: ListItemsQuerySchema,
    responses: { 200: { description: 'A page of entities', schema: ItemPageSchema } },
    problems: [404],
    async handle({ params, query, deps }) {
      await deps.sources.require(params.sourceId);
      const changedSince = query.changedSince === undefined ? undefined : Date.parse(query.changedSince);
      const includeTombstoned = query.includeTombstoned ?? changedSince !== undefined;
      let pollStart: number | undefined;
      const listing = `items:${params.sourceId}:${changedSince ?? ''}:${includeTombstoned}`;
      const page = await listPage(deps.cursors, listing, query.cursor, async (cursor) => {
        const result = await deps.itemListing.list(params.sourceId, {
          limit: query.limit,
          cursor,
          changedSince,
          includeTombstoned,
          now: deps.clock.now(),
        });
        pollStart = result.pollStart;
        return result;
      });
      return {
        status: 200,
        body: {
          items: page.items.map(toItemView),
          nextCursor: page.nextCursor,
          ...(pollStart === undefined ? {} : { nextChangedSince: iso(pollStart - CHANGE_POLL_OVERLAP_MS)! }),
        },
      };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/sources/{sourceId}/items/{entityId}',
    operationId: 'getItem',
    summary: 'Get one stored entity with its provenance',
    description:
      'Tombstoned entities are returned too (`tombstonedAt` set). 404 when the entity was never stored.',
    tag: 'items',
    params: ItemPathSchema,
    responses: { 200: { description: 'The entity', schema: ItemViewSchema } },
    problems: [404],
    async handle({ params, deps }) {
      await deps.sources.require(params.sourceId);
      const item = await deps.items.get(params.sourceId, params.entityId);
      if (!item)
        throw new ItemNotFoundError(`source ${params.sourceId} has no stored entity ${params.entityId}`);
      return { status: 200, body: toItemView(item) };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/sources/{sourceId}/items/{entityId}/explain',
    operationId: 'explainItem',
    summary: 'Why an entity is stored as it is, stale, tombstoned or missing',
    description:
      "The entity's story: the last run that listed it, the version stored and by which run and page, its tombstone, its open dead letter, and when it is not stored the reason the engine knows. Answers 200 for an entity never seen (status `never_listed`); 404 only for an unknown source.",
    tag: 'items',
    params: ItemPathSchema,
    responses: { 200: { description: 'The explanation', schema: ItemExplanationSchema } },
    problems: [404],
    async handle({ params, deps }) {
      return { status: 200, body: await explainItem(deps, params.sourceId, params.entityId) };
    },
  }),
];
