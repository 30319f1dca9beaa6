import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { putSource, useEngineWithFakes } from '../support/harness.js';

/*
 * Listings that would never end, from sources as they are: a cursor API whose pages lead back to
 * one already read (page 3 naming page 2 as its next — a token scheme with a bug, a replica
 * serving an older page), and a page-number API that answers 400 for every page past its last
 * (WordPress's `rest_post_invalid_page_number`; GitHub search's 422 past 1,000 results). Each run
 * must end with a reason within a bounded number of requests, not at the 100,000-page budget.
 */

const PAGE = 5;
let server: Server;
let base: string;
const requests: Record<string, number> = {};

function records(page: number): { id: string; updatedAt: string }[] {
  return Array.from({ length: PAGE }, (_, i) => ({
    id: `r${page * PAGE + i}`,
    updatedAt: new Date(Date.UTC(2026, 0, 1, 0, 0, page * PAGE + i)).toISOString(),
  }));
}

/** `/cycle/<length>`: cursor pages c0 → c1 → … → c4, then back `length` pages. `/pages/<last>/<bad>`: 400 past `last`, and on `bad`. */
function answer(path: string, query: URLSearchParams): { status: number; body: unknown } {
  const [, kind, a, b] = path.split('/');
  if (kind === 'cycle') {
    const length = Number(a);
    const at = Number((query.get('cursor') ?? 'c0').slice(1));
    const next = at < 4 ? at + 1 : 5 - length;
    return { status: 200, body: { data: records(at), next: `c${next}` } };
  }
  const page = Number(query.get('page') ?? '1');
  const last = Number(a);
  const bad = b === undefined ? -1 : Number(b);
  if (page > last || page === bad) {
    return { status: 400, body: { code: 'rest_post_invalid_page_number', message: 'page out of range' } };
  }
  return { status: 200, body: { data: records(page) } };
}

beforeAll(async () => {
  server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://x');
    requests[url.pathname] = (requests[url.pathname] ?? 0) + 1;
    const { status, body } = answer(url.pathname, url.searchParams);
    response.writeHead(status, { 'content-type': 'application/json' });
    response.end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

const { engine, runToEnd } = useEngineWithFakes('endless');

function config(path: string, pagination: Record<string, unknown>): Record<string, unknown> {
  return {
    url: `${base}${path}`,
    itemsPath: 'data',
    idField: 'id',
    updatedAtField: 'updatedAt',
    pageSize: PAGE,
    pagination,
  };
}

describe('a cursor stream whose pages form a cycle', () => {
  it.each([1, 2, 3, 5])('ends failed `cursor_cycle` when the cycle is %i pages long', async (length) => {
    const path = `/cycle/${length}`;
    const sourceId = `cycle-${length}`;
    await putSource(
      engine.deps,
      sourceId,
      'rest-json',
      config(path, { type: 'cursor', cursorParam: 'cursor', nextCursorPath: 'next' }),
    );
    const run = await runToEnd(sourceId, 'full');
    expect(run.state).toBe('failed');
    expect(run.failure?.reason).toBe(length === 1 ? 'page_failed' : 'cursor_cycle');
    // Five pages lead into the cycle; the watch closes it by page 2·max(5 + 1, λ) + λ + 1, not at
    // the page budget.
    expect(requests[path]).toBeLessThanOrEqual(2 * Math.max(5 + 1, length) + length + 1);
  });
});

describe('a page-number listing that refuses every page past its last', () => {
  it('ends failed `pages_failing` after three refused pages in a row, each a dead letter', async () => {
    const path = '/pages/4';
    await putSource(engine.deps, 'past-last', 'rest-json', config(path, { type: 'page', pageParam: 'page' }));
    const run = await runToEnd('past-last', 'full');
    expect(run.state).toBe('failed');
    expect(run.failure?.reason).toBe('pages_failing');
    expect(run.failure?.message).toContain('pages 5–7');
    expect(run.progress.processed).toBe(4 * PAGE);
    expect(requests[path]).toBe(7);
    const entries = await engine.deps.deadLetters.list('past-last', { limit: 10 });
    expect(entries.items.filter((e) => e.kind === 'page')).toHaveLength(3);
  });

  it('skips one refused page in the middle and reads on to the end', async () => {
    const path = '/pages/6/3';
    await putSource(engine.deps, 'one-bad', 'rest-json', config(path, { type: 'page', pageParam: 'page' }));
    const run = await runToEnd('one-bad', 'full');
    // Pages 7–9 are refused as past the end: the run reads every page that has rows, then stops.
    expect(run.progress.processed).toBe(5 * PAGE);
    expect(run.failure?.reason).toBe('pages_failing');
    expect(run.failure?.message).toContain('pages 7–9');
  });
});
