import { describe, expect, it } from 'vitest';
import type { ConnectorContext } from '../../lib/connectors/contract.js';
import { restJsonConnector as rest, restJsonConfigSchema } from '../../lib/connectors/rest-json/index.js';

/**
 * Sources that cut a page to its limit and then drop the rows the caller may not see
 * (soft-deleted, permission-filtered): Stripe's list endpoints and Slack's `conversations.list`
 * answer a page shorter than the limit, even an empty one, with a cursor to the next; Jira's
 * search filters after paging too. The stream must go on for as long as the source says more
 * follows.
 */

const LIST = 'https://api.example.com/v1/records';
const BASE = Date.parse('2026-03-01T00:00:00.000Z');

interface Row {
  readonly id: string;
  readonly updatedAt: string;
}

/** 400 rows, one a second; `hidden` are dropped after the limit is applied. */
function rows(): Row[] {
  return Array.from({ length: 400 }, (_, i) => ({
    id: `r${String(i).padStart(4, '0')}`,
    updatedAt: new Date(BASE + i * 1000).toISOString(),
  }));
}

/** Rows 105–113 (a page of 91 after one of 100), and all of 230–329 (a page with nothing to show). */
const hidden = (row: Row) => {
  const n = Number(row.id.slice(1));
  return (n >= 105 && n <= 113) || (n >= 230 && n <= 329);
};

type Paging = 'cursor' | 'page-total' | 'page';

/**
 * The API: `since` (inclusive), `limit` (at most `cap`), and an offset cursor or a page number;
 * rows `hide` names are dropped after the limit.
 */
function api(paging: Paging, all: readonly Row[], hide = hidden, cap = Number.POSITIVE_INFINITY) {
  return (async (input: unknown) => {
    const url = new URL(String(input));
    const since = url.searchParams.get('since');
    const limit = Math.min(cap, Number(url.searchParams.get('limit')));
    const listing = all.filter((r) => since === null || r.updatedAt >= since);
    const offset =
      paging === 'cursor'
        ? Number(url.searchParams.get('cursor') ?? '0')
        : (Number(url.searchParams.get('page') ?? '1') - 1) * limit;
    const page = listing.slice(offset, offset + limit);
    const more = offset + limit < listing.length;
    return Response.json({
      data: page.filter((r) => !hide(r)),
      next_cursor: paging === 'cursor' && more ? String(offset + limit) : null,
      ...(paging === 'page-total' ? { total: listing.length } : {}),
    });
  }) as typeof fetch;
}

function config(paging: Paging) {
  return restJsonConfigSchema.parse({
    url: LIST,
    itemsPath: 'data',
    idField: 'id',
    updatedAtField: 'updatedAt',
    sinceParam: 'since',
    ordered: true,
    pageSize: 100,
    pagination:
      paging === 'cursor'
        ? { type: 'cursor', cursorParam: 'cursor', nextCursorPath: 'next_cursor' }
        : { type: 'page', pageParam: 'page' },
    ...(paging === 'page-total' ? { totalPath: 'total' } : {}),
  });
}

async function readAll(
  paging: Paging,
  all: readonly Row[] = rows(),
  source: typeof fetch = api(paging, all),
): Promise<string[]> {
  const ctx: ConnectorContext = { fetch: source, secrets: async () => '', since: null };
  const ids: string[] = [];
  let cursor: string | null = null;
  for (let pages = 0; pages === 0 || cursor !== null; pages++) {
    if (pages > 100) throw new Error('the stream did not end');
    const page = await rest.fetchPage(config(paging), cursor, ctx);
    ids.push(...page.items.map((item) => (item as Row).id));
    cursor = page.nextCursor;
  }
  return ids;
}

const visible = rows()
  .filter((row) => !hidden(row))
  .map((row) => row.id);

describe('a source that drops rows after its limit', () => {
  it.each<Paging>(['cursor', 'page-total'])(
    '%s: short and empty pages with more to follow do not end the stream: every visible row is read once',
    async (paging) => {
      expect(await readAll(paging)).toEqual(visible);
    },
  );

  it.each<Paging>(['cursor', 'page-total', 'page'])(
    '%s: a tie group larger than a page, short pages in it, is read whole once and the stream ends',
    async (paging) => {
      // A bulk edit gave the last 250 rows one updatedAt: the stream ends inside the group.
      const tied = rows().map((row, i) =>
        i >= 150 ? { ...row, updatedAt: new Date(BASE + 150_000).toISOString() } : row,
      );
      const ids = await readAll(paging, tied);
      expect(new Set(ids).size).toBe(ids.length);
      // Page numbers without a total end at the empty page the hidden rows 230–329 make.
      const shown = tied.filter((row) => !hidden(row) && (paging !== 'page' || row.id < 'r0230'));
      expect(ids).toEqual(shown.map((row) => row.id));
    },
  );

  it('page-total: pages capped at one row whatever the limit, the first ones empty, are read to the total', async () => {
    // A search service under load serves one row a page; the first rows are hidden, so no page
    // has shown the true page size yet when the total is first compared.
    const few = rows().slice(0, 6);
    const first = (row: Row) => row.id < 'r0003';
    const ids = await readAll('page-total', few, api('page-total', few, first, 1));
    expect(ids).toEqual(['r0003', 'r0004', 'r0005']);
  });

  it('page numbers without a total: a short page is re-listed from its last key before the stream ends', async () => {
    const ids = await readAll('page');
    // The page of 91 does not end the stream; the run of 100 hidden rows (an empty page) does:
    // without a total, nothing tells it apart from the end.
    expect(ids).toEqual(visible.filter((id) => Number(id.slice(1)) < 230));
  });
});
