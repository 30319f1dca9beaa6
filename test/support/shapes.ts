import { fakeRestConfig } from '../../tools/fake-source/connector-config.js';
import type { FakeSource } from '../../tools/fake-source/index.js';

/** The listings of the fake source a test can point a connector at. */
export type FakeShape = 'github' | 'gitlab' | 'rest-cursor' | 'rest-page';

/** A connector and its config over one of the fake source's listings. */
export interface ShapedSource {
  readonly connector: 'github-issues' | 'gitlab-issues' | 'rest-json';
  readonly config: Record<string, unknown>;
  /** How the fake's ground truth names this listing's entities (`compareWithTruth`): GitLab's by issue number too. */
  readonly storeShape: 'github' | 'rest';
}

/** Options of {@link sourceOfShape}. */
export interface ShapeOptions {
  /** Entities per page (`perPage` or `pageSize`); default 20. */
  readonly pageSize?: number;
  /** Config fields merged in last (a repository name, a lookback, a pagination variant). */
  readonly config?: Record<string, unknown>;
}

/**
 * The connector config that reads `fake` through `shape`: GitHub's issues (`octo/harvest`),
 * GitLab's (`acme/platform/api`), or the rest-json listing with a stable keyset cursor
 * (`/records`) or page numbers (`/records-paged`).
 *
 * @example
 * const { connector, config } = sourceOfShape(fake, 'github', { pageSize: 10 });
 * await putSource(engine.deps, sourceId, connector, config);
 */
export function sourceOfShape(
  fake: Pick<FakeSource, 'url'>,
  shape: FakeShape,
  options: ShapeOptions = {},
): ShapedSource {
  const pageSize = options.pageSize ?? 20;
  const extra = options.config ?? {};
  switch (shape) {
    case 'github':
      return {
        connector: 'github-issues',
        config: { owner: 'octo', repo: 'harvest', baseUrl: fake.url, perPage: pageSize, ...extra },
        storeShape: 'github',
      };
    case 'gitlab':
      return {
        connector: 'gitlab-issues',
        config: { project: 'acme/platform/api', baseUrl: `${fake.url}/api/v4`, perPage: pageSize, ...extra },
        storeShape: 'github',
      };
    case 'rest-cursor':
      return {
        connector: 'rest-json',
        config: fakeRestConfig(fake.url, { pageSize, ...extra }),
        storeShape: 'rest',
      };
    case 'rest-page':
      return {
        connector: 'rest-json',
        config: fakeRestConfig(fake.url, {
          url: `${fake.url}/records-paged`,
          pageSize,
          pagination: { type: 'page', pageParam: 'page' },
          ...extra,
        }),
        storeShape: 'rest',
      };
  }
}
