import { describe, expect, it } from 'vitest';
import type { ConnectorContext } from '../../lib/connectors/contract.js';
import { restJsonConnector as rest, restJsonConfigSchema } from '../../lib/connectors/rest-json/index.js';

/**
 * A `since` filter that lists only records modified strictly after the time given, as Stripe's
 * `created[gt]` and Zendesk's incremental `start_time` do. A keyed run asks `since` = the key of
 * its last delivered record; where a page ends inside a tie group, the group's other members are
 * at exactly that time, and an exclusive filter would never list them again.
 */

const LIST = 'https://api.example.com/v1/records';
const t = (s: number) => new Date(Date.UTC(2026, 2, 1, 0, 0, s)).toISOString();

/** r0 at 0 s, a bulk edit r1–r6 at 1 s, r7 at 2 s, r8 at 3 s. */
const ROWS = Array.from({ length: 9 }, (_, i) => ({
  id: `r${i}`,
  updatedAt: t(i === 0 ? 0 : i <= 6 ? 1 : i - 5),
}));

const requests: string[] = [];

/** `since` exclusive, `limit`, an offset cursor. */
const api = (async (input: unknown) => {
  const url = new URL(String(input));
  requests.push(url.search);
  const since = url.searchParams.get('since');
  const limit = Number(url.searchParams.get('limit'));
  const offset = Number(url.searchParams.get('cursor') ?? '0');
  const listing = ROWS.filter((r) => since === null || r.updatedAt > since);
  const more = offset + limit < listing.length;
  return Response.json({
    data: listing.slice(offset, offset + limit),
    next_cursor: more ? String(offset + limit) : null,
  });
}) as typeof fetch;

const config = restJsonConfigSchema.parse({
  url: LIST,
  itemsPath: 'data',
  idField: 'id',
  updatedAtField: 'updatedAt',
  sinceParam: 'since',
  sinceBound: 'exclusive',
  ordered: true,
  pageSize: 3,
  pagination: { type: 'cursor', cursorParam: 'cursor', nextCursorPath: 'next_cursor' },
});

async function readAll(since: string | null): Promise<string[]> {
  const ctx: ConnectorContext = { fetch: api, secrets: async () => '', since };
  const ids: string[] = [];
  let cursor: string | null = null;
  for (let pages = 0; pages === 0 || cursor !== null; pages++) {
    if (pages > 50) throw new Error('the stream did not end');
    const page = await rest.fetchPage(config, cursor, ctx);
    ids.push(...page.items.map((item) => (item as { id: string }).id));
    cursor = page.nextCursor;
  }
  return ids;
}

describe('a source whose since filter is exclusive (sinceBound: exclusive)', () => {
  it('reads the rest of a tie group a page ended inside, each record once', async () => {
    expect(await readAll(null)).toEqual(ROWS.map((r) => r.id));
  });

  it('asks since one millisecond before the time it means, so records at that time are listed', async () => {
    requests.length = 0;
    expect(await readAll(t(2))).toEqual(['r7', 'r8']);
    expect(new URLSearchParams(requests[0]).get('since')).toBe('2026-03-01T00:00:01.999Z');
  });
});
