import type { Command } from 'commander';
import { type ApiClient, createApiClient, DEFAULT_ENDPOINT } from './client.js';
import { CliUsageError } from './errors.js';
import type { Io } from './output.js';

export { CliUsageError } from './errors.js';

/** What every API command needs: the client, the output and whether to print JSON. */
export interface CommandContext {
  readonly io: Io;
  readonly json: boolean;
  client(): Promise<ApiClient>;
  /** A command line that works when pasted: `harvester --endpoint <this API> <args>`. */
  hint(args: string): string;
}

/**
 * A follow-up command that works when pasted: `harvester` as the docs install it (on PATH through
 * `bin/`, `npm link` or a package install), naming the API it talked to.
 */
export function pasteableCommand(endpoint: string | undefined, args: string): string {
  const target = endpoint ?? process.env.HARVESTER_API_URL ?? DEFAULT_ENDPOINT;
  return `harvester --endpoint ${target} ${args}`;
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
    hint: (args) => pasteableCommand(globals.endpoint, args),
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
