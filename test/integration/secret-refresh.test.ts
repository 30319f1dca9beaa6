import { PutParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSecretResolver } from '../../lib/engine/index.js';
import { TEST_REGION, testEndpoint } from '../support/aws.js';

/**
 * A credential rotated in SSM: the resolver keeps serving its cached value until the source
 * rejects it, then (`invalidate`, a Powertools `forceFetch`) reads the store again at once.
 */

let ssm: SSMClient;
const name = `/harvester/refresh-${Date.now().toString(36)}/token`;
const put = (value: string) =>
  ssm.send(new PutParameterCommand({ Name: name, Value: value, Type: 'SecureString', Overwrite: true }));

beforeAll(() => {
  ssm = new SSMClient({
    region: TEST_REGION,
    endpoint: testEndpoint(),
    credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' },
  });
});
afterAll(() => ssm.destroy());

describe('secret refresh against SSM', () => {
  it('serves the cached value after a rotation, and the new one once invalidated', async () => {
    const secrets = createSecretResolver({ region: TEST_REGION, endpoint: testEndpoint() });
    await put('old');
    expect(await secrets(`ssm:${name}`)).toBe('old');
    await put('new');
    expect(await secrets(`ssm:${name}`)).toBe('old');
    secrets.invalidate?.(`ssm:${name}`);
    expect(await secrets(`ssm:${name}`)).toBe('new');
  });

  it('names a missing parameter by the store’s own error', async () => {
    const secrets = createSecretResolver({ region: TEST_REGION, endpoint: testEndpoint() });
    await expect(secrets(`ssm:${name}-absent`)).rejects.toThrow('(ParameterNotFound): no such SSM parameter');
  });
});
