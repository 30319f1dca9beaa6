import { availableParallelism } from 'node:os';
import type { TestProject } from 'vitest/node';
import { type Emulator, startEmulator } from '../../lib/local/emulator.js';

declare module 'vitest' {
  export interface ProvidedContext {
    awsEndpoints: string[];
  }
}

/**
 * Starts one moto per test worker for the whole run (unless AWS_ENDPOINT_URL is set) and stops
 * them at the end. moto serves DynamoDB one request at a time (see startEmulator), so files in
 * parallel workers sharing one emulator would wait for each other; one each keeps every core busy.
 * `TEST_EMULATORS` overrides the count. Each stands behind a DynamoDB door that refuses, and
 * the run then fails for, any request DynamoDB itself would refuse.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // vitest's own default when maxWorkers is not configured: one worker fewer than the cores.
  const configured = project.config.maxWorkers;
  const workers =
    typeof configured === 'number' && configured > 0 ? configured : Math.max(availableParallelism() - 1, 1);
  const count = process.env.AWS_ENDPOINT_URL ? 1 : Number(process.env.TEST_EMULATORS ?? workers);
  const emulators: Emulator[] = await Promise.all(
    Array.from({ length: Math.max(1, count) }, () => startEmulator()),
  );
  project.provide(
    'awsEndpoints',
    emulators.map((e) => e.endpoint),
  );
  return async () => {
    // Every emulator this run started stands behind a DynamoDB door (lib/local/dynamo-door.ts):
    // a request that reached one and broke DynamoDB's rules fails the run, whichever client sent it.
    const refused = emulators.flatMap((e) => e.door?.violations() ?? []);
    await Promise.all(emulators.map((e) => e.stop()));
    if (refused.length > 0) {
      // vitest reports a teardown error without failing the run's exit code: set it here.
      process.exitCode = 1;
      const lines = refused.slice(0, 20).map((v) => `  ${v.operation} ${v.tables.join(',')}: ${v.message}`);
      throw new Error(
        `${refused.length} DynamoDB request(s) reached the emulator breaking DynamoDB's rules:\n${lines.join('\n')}`,
      );
    }
  };
}
