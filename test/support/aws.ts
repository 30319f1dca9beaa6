import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import { type AwsClients, createAwsClients } from '../../lib/aws/clients.js';
import { type ResourceNames, resourceNamesFor } from '../../lib/config/env.js';
import { isSerializedEmulator } from '../../lib/local/emulator.js';
import {
  type BootstrapOptions,
  bootstrapResources,
  type ResolvedResources,
} from '../../lib/resources/bootstrap.js';

export const TEST_REGION = 'us-east-1';

/** This worker's emulator: workers take the started emulators in turn (`VITEST_POOL_ID` is 1-based). */
export function testEndpoint(): string {
  const endpoints = inject('awsEndpoints');
  const worker = Number(process.env.VITEST_POOL_ID ?? '1');
  return endpoints[(Math.max(1, worker) - 1) % endpoints.length] as string;
}

/** Everything an integration test needs: clients on the emulator and its own freshly created resources. */
export interface TestAws {
  readonly endpoint: string;
  readonly clients: AwsClients;
  readonly prefix: string;
  readonly names: ResourceNames;
  readonly resources: ResolvedResources;
}

/**
 * Creates uniquely prefixed tables and queues for one test file, so files can run in parallel
 * against one emulator.
 */
export async function setUpTestAws(hint: string, options: BootstrapOptions = {}): Promise<TestAws> {
  const endpoint = testEndpoint();
  // A hand-started plain moto_server does not make conditional writes atomic; serialize this
  // process's DynamoDB calls there so the tests exercise our conditions, not moto's races.
  const serializeDynamoDB = !(await isSerializedEmulator(endpoint));
  const clients = createAwsClients({ region: TEST_REGION, endpoint, serializeDynamoDB });
  const prefix = `t-${hint}-${randomBytes(3).toString('hex')}`;
  const names = resourceNamesFor(prefix);
  const resources = await bootstrapResources(clients, names, options);
  return { endpoint, clients, prefix, names, resources };
}
