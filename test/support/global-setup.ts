import type { TestProject } from 'vitest/node';
import { startEmulator } from '../../lib/local/emulator.js';

declare module 'vitest' {
  export interface ProvidedContext {
    awsEndpoint: string;
  }
}

/** Starts moto once for the whole test run (unless AWS_ENDPOINT_URL is set) and stops it at the end. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const emulator = await startEmulator();
  project.provide('awsEndpoint', emulator.endpoint);
  return () => emulator.stop();
}
