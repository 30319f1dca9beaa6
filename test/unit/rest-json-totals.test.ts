import { describe, expect, it } from 'vitest';
import { restJsonConfigSchema } from '../../lib/connectors/rest-json/index.js';
import { keyedNext } from '../../lib/connectors/rest-json/pagination.js';

/** Page-numbered listings whose `total` decides the next page: a total is a hint, never an end on its own. */
const config = restJsonConfigSchema.parse({
  url: 'https://api.example.com/search',
  itemsPath: 'data',
  idField: 'id',
  updatedAtField: 'updatedAt',
  sinceParam: 'since',
  totalPath: 'total',
  ordered: true,
  pageSize: 3,
  pagination: { type: 'page' },
});
const page = (rows: number, total: number) => ({
  body: { total },
  items: Array.from({ length: rows }, (_, i) => ({ id: i })),
  url: 'https://api.example.com/search',
});

describe('a keyed page-numbered listing with a total', () => {
  it('reads on while the total says rows remain: the source’s word', () => {
    expect(keyedNext(config, '1', page(3, 10), 3)).toEqual({ next: '2', guessed: false });
  });

  it('reads past a total that counts short when the page was full (a search total that is a lower bound)', () => {
    // 3 pages of 3 listed, the total says 8: the last page was full, so rows may follow.
    expect(keyedNext(config, '3', page(3, 8), 3)).toEqual({ next: '4', guessed: true });
  });

  it('counts the pages so far at the size of this one: a page size that dropped mid-run (GitHub capping `per_page`) addressed fewer rows', () => {
    // Pages held 2 rows, then the cap fell to 1: page 2 at one row a page is the 2nd row of 3.
    expect(keyedNext(config, '2', page(1, 3), 2)).toEqual({ next: '3', guessed: false });
    // A short last page cannot tell a smaller size from the end: one more request decides.
    expect(keyedNext(config, '3', page(2, 8), 3)).toEqual({ next: '4', guessed: false });
  });

  it('ends where the total and the page agree', () => {
    expect(keyedNext(config, '3', page(2, 6), 3)).toEqual({ next: null, guessed: false });
    expect(keyedNext(config, '4', page(0, 8), 3)).toEqual({ next: null, guessed: false });
  });
});
