import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram, runCli } from '../../lib/cli/main.js';
import { captureIo } from '../support/cli-io.js';

/** Every command path of the CLI, groups and leaves: `sources`, `sources put`, … */
function commandPaths(command: Command, prefix: readonly string[] = []): string[][] {
  return command.commands.flatMap((sub) => {
    const path = [...prefix, sub.name()];
    return [path, ...commandPaths(sub, path)];
  });
}

const PATHS = commandPaths(buildProgram(captureIo()));

describe('CLI help', () => {
  it('knows the commands the tree walk relies on', () => {
    expect(PATHS.map((p) => p.join(' '))).toEqual(
      expect.arrayContaining(['sources put', 'runs start', 'dlq retry', 'local', 'fake-source']),
    );
  });

  it('shows examples on the top-level help', async () => {
    const io = captureIo();
    expect(await runCli(['node', 'harvester', '--help'], io)).toBe(0);
    expect(io.stdout()).toMatch(/Examples:\n {2}\$ harvester /);
  });

  it.each(PATHS.map((path) => [path.join(' '), path]))(
    'harvester %s --help shows an example of that command',
    async (_name, path) => {
      const io = captureIo();
      expect(await runCli(['node', 'harvester', ...path, '--help'], io)).toBe(0);
      const help = io.stdout();
      const at = help.search(/\nExamples?:\n/);
      expect(at, 'no "Examples:" block').toBeGreaterThan(0);
      const shown = help.slice(at).split('\n');
      expect(shown.filter((line) => line.startsWith(`  $ harvester ${path.join(' ')}`))).not.toHaveLength(0);
    },
  );
});
