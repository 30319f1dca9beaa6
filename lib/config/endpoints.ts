import { z } from 'zod';

/**
 * The AWS services Harvester calls, each with the service id its SDK client is named by. The SDK
 * derives a service's own endpoint variable from that id (`AWS_ENDPOINT_URL_` + the id in upper
 * case, spaces as `_`: see `getEndpointUrlConfig` in `@smithy/core`), so these ids fix the
 * variable names below.
 */
export const AWS_SERVICE_IDS = {
  dynamodb: 'DynamoDB',
  dynamodbStreams: 'DynamoDB Streams',
  sqs: 'SQS',
  scheduler: 'Scheduler',
  eventbridge: 'EventBridge',
  s3: 'S3',
  kms: 'KMS',
  ssm: 'SSM',
  secretsManager: 'Secrets Manager',
} as const;

/** One of the AWS services Harvester calls (`dynamodb`, `sqs`, …). */
export type AwsService = keyof typeof AWS_SERVICE_IDS;

/** The endpoint of each service that has one; a service left out goes to AWS itself. */
export type ServiceEndpoints = Partial<Record<AwsService, string>>;

/** Every service, in a fixed order. */
export const AWS_SERVICES = Object.keys(AWS_SERVICE_IDS) as AwsService[];

/**
 * The environment variable that gives one service its own endpoint, as the SDK names it.
 *
 * @example
 * endpointVariable('secretsManager'); // 'AWS_ENDPOINT_URL_SECRETS_MANAGER'
 */
export function endpointVariable(service: AwsService): string {
  return `AWS_ENDPOINT_URL_${AWS_SERVICE_IDS[service].toUpperCase().replaceAll(' ', '_')}`;
}

const flag = z.enum(['true', 'false']).transform((value) => value === 'true');

const url = z.url().optional();

/**
 * The endpoint part of the environment: `AWS_ENDPOINT_URL` for every service, the SDK's
 * per-service variables for one each (spelled out, so the schema's type names each), and
 * `HARVESTER_LOCAL`, which overrides whether Harvester behaves as on an emulator (see
 * {@link resolveEndpoints}). A unit test checks the names against {@link endpointVariable}.
 */
export const EndpointEnvShape = {
  AWS_ENDPOINT_URL: url,
  AWS_ENDPOINT_URL_DYNAMODB: url,
  AWS_ENDPOINT_URL_DYNAMODB_STREAMS: url,
  AWS_ENDPOINT_URL_SQS: url,
  AWS_ENDPOINT_URL_SCHEDULER: url,
  AWS_ENDPOINT_URL_EVENTBRIDGE: url,
  AWS_ENDPOINT_URL_S3: url,
  AWS_ENDPOINT_URL_KMS: url,
  AWS_ENDPOINT_URL_SSM: url,
  AWS_ENDPOINT_URL_SECRETS_MANAGER: url,
  /** Behave as on an emulator (`true`) or as on AWS (`false`). Default: `true` when any endpoint is set. */
  HARVESTER_LOCAL: flag.optional(),
};

/** Where each service is reached, and whether that is an emulator. */
export interface EndpointConfig {
  /** `AWS_ENDPOINT_URL`: the endpoint of every service without its own. */
  readonly endpoint: string | undefined;
  /** Each service's endpoint: its own variable, else `AWS_ENDPOINT_URL`; empty on AWS. */
  readonly endpoints: ServiceEndpoints;
  /**
   * Harvester runs against emulators: sources may be on loopback and private addresses, S3 is
   * addressed by path, clients sign with dummy credentials. `HARVESTER_LOCAL` when set, else
   * whether any endpoint variable is set.
   */
  readonly local: boolean;
}

/**
 * Reads the endpoint variables of a parsed environment. A service's own variable wins over
 * `AWS_ENDPOINT_URL`, as in the SDK (DynamoDB Streams without one follow DynamoDB). Being local
 * does not depend on which variable is set, so DynamoDB on one emulator and everything else on
 * another behaves like one emulator.
 *
 * @example
 * resolveEndpoints({ AWS_ENDPOINT_URL: 'http://127.0.0.1:5000', AWS_ENDPOINT_URL_DYNAMODB: 'http://127.0.0.1:8000' });
 * // { endpoint: 'http://127.0.0.1:5000', endpoints: { dynamodb: 'http://127.0.0.1:8000', sqs: 'http://127.0.0.1:5000', … }, local: true }
 */
export function resolveEndpoints(env: Readonly<Record<string, unknown>>): EndpointConfig {
  const global = typeof env.AWS_ENDPOINT_URL === 'string' ? env.AWS_ENDPOINT_URL : undefined;
  const endpoints: ServiceEndpoints = {};
  const own = (service: AwsService): string | undefined => {
    const value = env[endpointVariable(service)];
    return typeof value === 'string' ? value : undefined;
  };
  for (const service of AWS_SERVICES) {
    // A table's stream lives where the table does: DynamoDB moved to its own emulator takes its
    // Streams along, unless they are given an endpoint of their own.
    const fallback = service === 'dynamodbStreams' ? (own('dynamodb') ?? global) : global;
    const endpoint = own(service) ?? fallback;
    if (endpoint !== undefined) endpoints[service] = endpoint;
  }
  const local =
    typeof env.HARVESTER_LOCAL === 'boolean' ? env.HARVESTER_LOCAL : Object.keys(endpoints).length > 0;
  return { endpoint: global, endpoints, local };
}

/**
 * The endpoint variables that reproduce `config` in another process (a worker) or another
 * `loadConfig`: `AWS_ENDPOINT_URL` plus each service whose endpoint differs from it, and
 * `HARVESTER_LOCAL` when it is not what the endpoints imply.
 */
export function endpointEnv(config: EndpointConfig): Record<string, string> {
  const env: Record<string, string> = config.endpoint ? { AWS_ENDPOINT_URL: config.endpoint } : {};
  for (const service of AWS_SERVICES) {
    const endpoint = config.endpoints[service];
    if (endpoint !== undefined && endpoint !== config.endpoint) env[endpointVariable(service)] = endpoint;
  }
  if (config.local !== Object.keys(config.endpoints).length > 0) env.HARVESTER_LOCAL = String(config.local);
  return env;
}

/** The endpoint variables of `env` that are set (to hand a caller's choice on unchanged). */
export function pickEndpointEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const names = ['AWS_ENDPOINT_URL', ...AWS_SERVICES.map(endpointVariable), 'HARVESTER_LOCAL'];
  return Object.fromEntries(names.flatMap((name) => (env[name] ? [[name, env[name]]] : [])));
}
