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

  it('ends where the total and a short page agree', () => {
    expect(keyedNext(config, '3', page(2, 8), 3)).toEqual({ next: null, guessed: false });
    expect(keyedNext(config, '4', page(0, 8), 3)).toEqual({ next: null, guessed: false });
  });
});
