/**
 * The `rest-json` connector config that reads a fake source's cursor-paginated `/records`
 * (ordered by modification time, its cursor a stable keyset position, `since` for incremental runs,
 * `/records/{id}` for retry by id).
 * Tests, the benchmark, the chaos suite and `harvester fake-source` use it.
 *
 * @example
 * const source = await startFakeSource({ entities: 1_000, seed: 1 });
 * await api.put(`/sources/demo`, { connector: 'rest-json', config: fakeRestConfig(source.url) });
 */
export function fakeRestConfig(
  baseUrl: string,
  overrides: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    url: `${baseUrl}/records`,
    itemsPath: 'data',
    idField: 'id',
    updatedAtField: 'updatedAt',
    pageSize: 100,
    sinceParam: 'since',
    totalPath: 'total',
    itemUrl: `${baseUrl}/records/{id}`,
    pagination: { type: 'cursor', cursorParam: 'cursor', nextCursorPath: 'next_cursor', stable: true },
    ordered: true,
    ...overrides,
  };
}
