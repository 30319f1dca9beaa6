import { type AwsClients, createAwsClients } from '../../lib/aws/clients.js';
import { type DynamoFaultPlan, DynamoFaults } from '../../lib/aws/dynamo-faults.js';
import { isSerializedEmulator } from '../../lib/local/emulator.js';
import { TEST_REGION, type TestAws } from './aws.js';

/** Clients on a test file's emulator with the seeded DynamoDB fault layer on, and the layer. */
export interface FaultyAws {
  readonly clients: AwsClients;
  readonly faults: DynamoFaults;
}

/**
 * A second set of clients on `aws`'s emulator (its tables and queues), whose DynamoDB requests go
 * through the fault layer with `plan`. Stores built on `clients` meet conflicts and stale reads;
 * `aws.clients` still sees the emulator as it is, for setting up and checking.
 *
 * @example
 * const { clients, faults } = await withDynamoFaults(aws, { seed: 1 });
 * faults.set({ seed: 1, transactionConflict: 1, limit: 1 }); // the next transaction collides once
 */
export async function withDynamoFaults(
  aws: TestAws,
  plan: DynamoFaultPlan,
  /** Attempts the SDK makes per request (its default: 3); 1 shows the caller every fault. */
  maxAttempts?: number,
): Promise<FaultyAws> {
  const faults = new DynamoFaults(plan);
  const serializeDynamoDB = !(await isSerializedEmulator(aws.endpoint));
  const clients = createAwsClients({
    region: TEST_REGION,
    endpoint: aws.endpoint,
    serializeDynamoDB,
    dynamoFaults: faults,
    ...(maxAttempts ? { maxAttempts } : {}),
  });
  return { clients, faults };
}
