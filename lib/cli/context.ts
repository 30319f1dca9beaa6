import type { Command } from 'commander';
import { type ApiClient, createApiClient } from './client.js';
import type { Io } from './output.js';

/** A mistake in the command line the API never sees (unreadable --config, a bad --schedule). */
export class CliUsageError extends Error {
  override readonly name = 'CliUsageError';
}

/** What every API command needs: the client, the output and whether to print JSON. */
export interface CommandContext {
  readonly io: Io;
  readonly json: boolean;
  client(): Promise<ApiClient>;
}

/** Global options (`--endpoint`, `--json`) as seen from a subcommand. */
export function contextOf(cmd: Command, io: Io): CommandContext {
  const globals = cmd.optsWithGlobals<{ endpoint?: string; json?: boolean }>();
  let client: Promise<ApiClient> | undefined;
  return {
    io,
    json: Boolean(globals.json),
    client: () => {
      client ??= createApiClient(globals.endpoint);
      return client;
    },
  };
}

/** Commander collector for repeatable options. */
export function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/** Parses a positive integer option. */
export function positiveInt(name: string): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < 0)
      throw new CliUsageError(`${name} must be a whole number, got "${value}"`);
    return n;
  };
}
