import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { SETTINGS_CONTEXT } from '../../infra/settings.js';
import { buildProgram } from '../../lib/cli/main.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const README = join(ROOT, 'README.md');
const DOCS = readdirSync(join(ROOT, 'docs'))
  .filter((name) => name.endsWith('.md'))
  .map((name) => join(ROOT, 'docs', name));

/** Markdown link targets of a file, without their #fragment. */
function linksOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => (m[1] as string).split('#')[0] as string);
}

/** Every `harvester <command> [<subcommand>]` the CLI knows. */
function commandPaths(program: Command, prefix = ''): string[] {
  return program.commands.flatMap((command) => {
    const path = `${prefix}${command.name()}`;
    return [path, ...commandPaths(command, `${path} `)];
  });
}

describe('the README', () => {
  const text = readFileSync(README, 'utf8');

  it('is a landing page: at most 250 lines', () => {
    expect(text.split('\n').length).toBeLessThanOrEqual(250);
  });

  it('starts with the two set-up commands', () => {
    const start = text.indexOf('npm ci');
    expect(start).toBeGreaterThan(0);
    expect(text.indexOf('npm run demo')).toBeGreaterThan(start);
    expect(text.indexOf('npm test')).toBeGreaterThan(start);
  });

  it.each([README, ...DOCS])('%s links only to files inside the repository that exist', (file) => {
    for (const link of linksOf(file)) {
      if (link === '') continue;
      expect(link, `${file}: ${link}`).not.toMatch(/^[a-z]+:/i);
      const target = resolve(dirname(file), link);
      expect(target.startsWith(ROOT), `${file}: ${link} leaves the repository`).toBe(true);
      expect(existsSync(target), `${file}: ${link} does not exist`).toBe(true);
    }
  });

  it('names only CLI commands that exist', () => {
    const program = buildProgram();
    const known = new Set(commandPaths(program));
    const used = [...text.matchAll(/^(?:npx )?harvester ([a-z-]+)(?: ([a-z-]+))?/gm)];
    expect(used.length).toBeGreaterThan(5);
    for (const [, command, sub] of used) {
      expect(known, `harvester ${command}`).toContain(command);
      const group = program.commands.find((c) => c.name() === command);
      if (sub && group && group.commands.length > 0) expect(known).toContain(`${command} ${sub}`);
    }
  });

  it('has a code-layout row for every folder of lib/, and names no folder that is gone', () => {
    const folders = readdirSync(join(ROOT, 'lib'), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => `lib/${entry.name}/`);
    for (const folder of folders) expect(text).toContain(`| \`${folder}\``);
    for (const [, named] of text.matchAll(/\| `(lib\/[a-z-]+\/)`/g)) expect(folders).toContain(named);
  });

  it('names only stack settings that exist', () => {
    const settings = new Set<string>(Object.values(SETTINGS_CONTEXT));
    const used = [...text.matchAll(/(harvester:[A-Za-z]+)/g)].map((m) => m[1] as string);
    expect(used.length).toBeGreaterThan(0);
    for (const setting of used) expect(settings).toContain(setting);
  });
});
