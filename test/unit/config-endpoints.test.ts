import { describe, expect, it } from 'vitest';
import { createAwsClients, destroyAwsClients } from '../../lib/aws/clients.js';
import {
  AWS_SERVICES,
  EndpointEnvShape,
  endpointEnv,
  endpointVariable,
  resolveEndpoints,
} from '../../lib/config/endpoints.js';
import { loadConfig } from '../../lib/config/env.js';

const A = 'http://127.0.0.1:5000';
const B = 'http://127.0.0.1:8000';

describe('endpoint variables', () => {
  it.each([
    ['dynamodb', 'AWS_ENDPOINT_URL_DYNAMODB'],
    ['dynamodbStreams', 'AWS_ENDPOINT_URL_DYNAMODB_STREAMS'],
    ['sqs', 'AWS_ENDPOINT_URL_SQS'],
    ['scheduler', 'AWS_ENDPOINT_URL_SCHEDULER'],
    ['eventbridge', 'AWS_ENDPOINT_URL_EVENTBRIDGE'],
    ['s3', 'AWS_ENDPOINT_URL_S3'],
    ['kms', 'AWS_ENDPOINT_URL_KMS'],
    ['ssm', 'AWS_ENDPOINT_URL_SSM'],
    ['secretsManager', 'AWS_ENDPOINT_URL_SECRETS_MANAGER'],
  ] as const)('%s is named %s, as the SDK reads it', (service, variable) => {
    expect(endpointVariable(service)).toBe(variable);
  });

  it('the schema reads every service variable', () => {
    for (const service of AWS_SERVICES)
      expect(Object.keys(EndpointEnvShape)).toContain(endpointVariable(service));
  });
});

describe('loadConfig endpoints', () => {
  it('gives a service its own endpoint over AWS_ENDPOINT_URL', () => {
    const config = loadConfig({ AWS_ENDPOINT_URL: A, AWS_ENDPOINT_URL_DYNAMODB: B });
    expect(config.endpoints.dynamodb).toBe(B);
    expect(config.endpoints.sqs).toBe(A);
    expect(config.endpoints.kms).toBe(A);
    expect(config.endpoint).toBe(A);
  });

  it('sends DynamoDB Streams where DynamoDB goes unless they have their own endpoint', () => {
    expect(loadConfig({ AWS_ENDPOINT_URL: A, AWS_ENDPOINT_URL_DYNAMODB: B }).endpoints.dynamodbStreams).toBe(
      B,
    );
    expect(
      loadConfig({ AWS_ENDPOINT_URL_DYNAMODB: B, AWS_ENDPOINT_URL_DYNAMODB_STREAMS: A }).endpoints
        .dynamodbStreams,
    ).toBe(A);
  });

  it('is local when only a per-service endpoint is set, with local source policy', () => {
    const config = loadConfig({ AWS_ENDPOINT_URL_DYNAMODB: B });
    expect(config.local).toBe(true);
    expect(config.endpoints).toEqual({ dynamodb: B, dynamodbStreams: B });
    expect(config.sourcePolicy.allowLoopback).toBe(true);
    expect(config.sourcePolicy.allowPrivate).toBe(true);
  });

  it('is not local without endpoints, and HARVESTER_LOCAL overrides both ways', () => {
    const aws = loadConfig({});
    expect([aws.local, aws.sourcePolicy.allowLoopback, aws.endpoints]).toEqual([false, false, {}]);
    const forcedAws = loadConfig({ AWS_ENDPOINT_URL: A, HARVESTER_LOCAL: 'false' });
    expect([
      forcedAws.local,
      forcedAws.sourcePolicy.allowLoopback,
      forcedAws.sourcePolicy.allowPrivate,
    ]).toEqual([false, false, false]);
    expect(loadConfig({ HARVESTER_LOCAL: 'true' }).sourcePolicy.allowLoopback).toBe(true);
  });

  it('rejects a per-service endpoint that is not a URL, naming the variable', () => {
    expect(() => loadConfig({ AWS_ENDPOINT_URL_SQS: 'nope' })).toThrow(/AWS_ENDPOINT_URL_SQS/);
  });

  it('endpointEnv reproduces the configuration in another process', () => {
    const env = { AWS_ENDPOINT_URL: A, AWS_ENDPOINT_URL_DYNAMODB: B, HARVESTER_LOCAL: 'false' };
    const config = loadConfig(env);
    expect(endpointEnv(config)).toEqual({ ...env, AWS_ENDPOINT_URL_DYNAMODB_STREAMS: B });
    const again = loadConfig(endpointEnv(config));
    expect([again.endpoint, again.endpoints, again.local]).toEqual([
      config.endpoint,
      config.endpoints,
      false,
    ]);
  });

  it('resolveEndpoints reads a parsed environment', () => {
    expect(resolveEndpoints({ AWS_ENDPOINT_URL_SQS: A, HARVESTER_LOCAL: false })).toEqual({
      endpoint: undefined,
      endpoints: { sqs: A },
      local: false,
    });
  });
});

describe('createAwsClients endpoints', () => {
  async function endpointOf(client: { config: { endpoint?: () => Promise<{ port?: number }> } }) {
    return (await client.config.endpoint?.())?.port;
  }

  it('sends each service to its own endpoint and signs with emulator credentials', async () => {
    const clients = createAwsClients({ region: 'us-east-1', endpoint: A, endpoints: { dynamodb: B } });
    try {
      expect(await endpointOf(clients.dynamo)).toBe(8000);
      expect(await endpointOf(clients.sqs)).toBe(5000);
      expect(await endpointOf(clients.kms)).toBe(5000);
      expect(await endpointOf(clients.s3())).toBe(5000);
      expect(clients.local).toBe(true);
      expect((await clients.sqs.config.credentials()).accessKeyId).toBe('testing');
      expect(clients.s3().config.forcePathStyle).toBe(true);
    } finally {
      destroyAwsClients(clients);
    }
  });

  it('uses path-style S3 and emulator credentials when local by a per-service endpoint only', async () => {
    const clients = createAwsClients({ region: 'us-east-1', endpoints: { dynamodb: B } });
    try {
      expect(clients.local).toBe(true);
      expect(clients.s3().config.forcePathStyle).toBe(true);
      expect((await clients.dynamo.config.credentials()).accessKeyId).toBe('testing');
    } finally {
      destroyAwsClients(clients);
    }
  });

  it('behaves as on AWS when told it is not local', () => {
    const clients = createAwsClients({ region: 'us-east-1', endpoint: A, local: false });
    try {
      expect(clients.s3().config.forcePathStyle).toBe(false);
    } finally {
      destroyAwsClients(clients);
    }
  });
});
