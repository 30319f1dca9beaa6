import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiDeps } from '../../lib/api/deps.js';
import { destroyAwsClients } from '../../lib/aws/clients.js';
import { callApi, setUpTestApi } from '../support/api.js';
import type { TestAws } from '../support/aws.js';

/** `PUT /sources/{id}` accepts gitlab-issues and s3-objects sources with validated configs, and names bad fields. */

let aws: TestAws;
let deps: ApiDeps;
beforeAll(async () => {
  ({ aws, deps } = await setUpTestApi('apiconn'));
});
afterAll(() => destroyAwsClients(aws.clients));

const put = (sourceId: string, body: unknown) => callApi(deps, 'PUT', `/sources/${sourceId}`, body);

describe('sources of the new connectors', () => {
  it('an S3 key prefix is data, not an auth prefix the raw-secret guard should refuse', async () => {
    const res = await put('s3-prefix', {
      connector: 's3-objects',
      config: { bucket: 'acme-exports', prefix: 'exports/2024/orders/' },
    });
    expect(res.status).toBe(201);
    const authPrefix = await put('rest-raw', {
      connector: 'rest-json',
      config: {
        url: 'https://api.example.com/records',
        idField: 'id',
        updatedAtField: 'updatedAt',
        pagination: { type: 'page' },
        auth: { prefix: 'Basic dXNlcjpwYXNzd29yZA==', secretRef: 'ssm:/harvester/rest-raw/k' },
      },
    });
    expect(authPrefix.status).toBe(400);
  });

  it.each([
    ['gitlab-issues', { project: 'acme/platform', tokenRef: 'ssm:/harvester/gl/token' }, 'gl'],
    ['s3-objects', { bucket: 'acme-exports', prefix: 'orders/', jsonBodies: { maxBytes: 65_536 } }, 's3'],
  ])('%s: a valid config is stored with its defaults', async (connector, config, sourceId) => {
    // gitlab-issues sends its token to its default base URL's origin, which an admin bound first.
    const bindings = { 'ssm:/harvester/gl/token': ['https://gitlab.com'] };
    await deps.secretBindings.put('gl', bindings, await deps.trust.signBindings('gl', bindings), Date.now());
    const res = await put(sourceId, { connector, config });
    expect(res.status).toBe(201);
    expect(res.json.config).toMatchObject(config);
    expect((await deps.sources.require(sourceId)).connector).toBe(connector);
  });

  it.each([
    ['gitlab-issues', { project: 'acme/platform', perPage: 500 }, 'config.perPage'],
    [
      'gitlab-issues',
      { project: 'acme/platform', tokenRef: 'ssm:/harvester/other/token' },
      'config.tokenRef',
    ],
    [
      'gitlab-issues',
      {
        project: 'acme/platform',
        baseUrl: 'http://gitlab.example.com/api/v4',
        tokenRef: 'ssm:/harvester/gl2/t',
      },
      'config.baseUrl',
    ],
    ['s3-objects', { bucket: 'Not_A_Bucket' }, 'config.bucket'],
    ['s3-objects', { bucket: 'acme', pageSize: 5_000 }, 'config.pageSize'],
  ] as [string, Record<string, unknown>, string][])(
    '%s: %j is refused naming %s',
    async (connector, config, path) => {
      const sourceId = String(config.tokenRef ?? '').includes('gl2') ? 'gl2' : 'refused';
      const res = await put(sourceId, { connector, config });
      expect(res.status).toBe(400);
      expect(JSON.stringify(res.json)).toContain(path);
    },
  );
});
