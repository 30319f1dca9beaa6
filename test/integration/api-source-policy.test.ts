import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiDeps } from '../../lib/api/deps.js';
import { destroyAwsClients } from '../../lib/aws/clients.js';
import { type HostLookup, STRICT_SOURCE_POLICY } from '../../lib/connectors/url-policy.js';
import { callApi, setUpTestApi } from '../support/api.js';
import type { TestAws } from '../support/aws.js';

/**
 * PUT /sources under the posture of a stack on AWS (no loopback, no private ranges, a host
 * allow-list): every refusal is problem+json naming the field, and nothing is stored.
 */

let aws: TestAws;
let deps: ApiDeps;
const lookup: HostLookup = async (host) => {
  if (host === 'api.example.com') return ['93.184.216.34'];
  if (host === 'intranet.example.com') return ['10.0.0.7'];
  throw new Error(`ENOTFOUND ${host}`);
};

beforeAll(async () => {
  let base: ApiDeps;
  ({ aws, deps: base } = await setUpTestApi('api-source-policy'));
  deps = {
    ...base,
    sourceGuard: { policy: { ...STRICT_SOURCE_POLICY, allowedHosts: ['*.example.com'] }, lookup },
  };
});
afterAll(() => destroyAwsClients(aws.clients));

const put = (sourceId: string, config: Record<string, unknown>) =>
  callApi(deps, 'PUT', `/sources/${sourceId}`, { connector: 'rest-json', config });

const config = (extra: Record<string, unknown>) => ({
  url: 'https://api.example.com/records',
  idField: 'id',
  updatedAtField: 'updatedAt',
  pagination: { type: 'page' },
  ...extra,
});

describe('PUT /sources refuses what the stack does not allow', () => {
  it.each([
    [
      "another source's secret",
      config({ auth: { secretRef: 'ssm:/harvester/victim/token' } }),
      'config.auth.secretRef',
    ],
    [
      'http:// with a secret',
      config({ url: 'http://api.example.com/r', auth: { secretRef: '/harvester/thief/k' } }),
      'config.url',
    ],
    ['the metadata service', config({ url: 'http://169.254.169.254/latest/meta-data/' }), 'config.url'],
    ['its IPv4-mapped form', config({ url: 'http://[::ffff:a9fe:a9fe]/' }), 'config.url'],
    [
      'the Lambda runtime API',
      config({ url: 'http://127.0.0.1:9001/2018-06-01/runtime/invocation/next' }),
      'config.url',
    ],
    ['a private address', config({ url: 'https://intranet.example.com/r' }), 'config.url'],
    ['a host off the allow-list', config({ url: 'https://api.other.test/r' }), 'config.url'],
  ])('%s → 400 problem+json, nothing stored', async (_what, body, field) => {
    const res = await put('thief', body);
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toBe('application/problem+json');
    expect(res.json.type).toBe('tag:harvester,2025:problems/source-policy');
    expect(res.json.errors.map((e: { path: string }) => e.path)).toContain(field);
    expect(await deps.sources.get('thief')).toBeUndefined();
  });

  it('stores a source that keeps to the policy', async () => {
    const bindings = { 'ssm:/harvester/thief/token': ['https://api.example.com'] };
    await deps.secretBindings.put(
      'thief',
      bindings,
      await deps.trust.signBindings('thief', bindings),
      Date.now(),
    );
    const res = await put('thief', config({ auth: { secretRef: 'ssm:/harvester/thief/token' } }));
    expect(res.status).toBe(201);
  });
});
