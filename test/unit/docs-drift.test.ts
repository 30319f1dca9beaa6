import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * Figures and versions the docs state that the repository itself can check: the README's
 * dependency table against package.json, the Node versions against `.nvmrc` and `engines`, and
 * every stated duration of the condition-mutant run against the measurement docs/testing.md records.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');
const pkg = JSON.parse(read('package.json')) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  engines: { node: string };
};

/**
 * The README's dependency table: each named package, as written or in the scope of the scoped
 * name before it (`lib-dynamodb` after `@aws-sdk/client-dynamodb`), and whether its row says dev.
 */
function tablePackages(): { names: string[]; dev: boolean }[] {
  const lines = read('README.md').split('\n');
  const start = lines.findIndex((l) => l.startsWith('| package '));
  const named: { names: string[]; dev: boolean }[] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith('|')) break;
    const cell = line.split('|')[1] ?? '';
    const dev = cell.trim().startsWith('dev:');
    let scope = '';
    for (const [, name] of cell.matchAll(/`([^`]+)`/g)) {
      if (name!.startsWith('@')) scope = name!.split('/')[0]!;
      named.push({ names: name!.startsWith('@') || !scope ? [name!] : [name!, `${scope}/${name}`], dev });
    }
  }
  return named;
}

describe('the docs agree with the repository', () => {
  it('the README names every dependency, in the right table half, and no package that is not one', () => {
    const named = tablePackages();
    const matches = (patterns: string[], name: string) =>
      patterns.some((p) => (p.endsWith('/*') ? name.startsWith(p.slice(0, -1)) : p === name));
    for (const name of Object.keys(pkg.dependencies))
      expect(
        named.some((n) => !n.dev && matches(n.names, name)),
        `${name} (dependency) is not in the README's table`,
      ).toBe(true);
    for (const name of Object.keys(pkg.devDependencies))
      expect(
        named.some((n) => n.dev && matches(n.names, name)),
        `${name} (dev dependency) is not in a dev: row`,
      ).toBe(true);
    const all = { ...pkg.dependencies, ...pkg.devDependencies };
    for (const n of named)
      expect(
        Object.keys(all).some((name) => matches(n.names, name)),
        `${n.names[0]}, in the README's table, is not in package.json`,
      ).toBe(true);
  });

  it('states the versions package.json pins: vitest, middy, zod', () => {
    const text = read('README.md');
    const major = (name: string) =>
      /(\d+)(?:\.(\d+))?/.exec({ ...pkg.dependencies, ...pkg.devDependencies }[name] ?? '')!;
    const vitest = major('vitest');
    expect(text).toContain(`\`vitest\` ${vitest[1]}.${vitest[2]}`);
    expect(text).toContain(`\`@middy/core\` ${major('@middy/core')[1]}`);
    expect(text).toContain(`\`zod\` ${major('zod')[1]}`);
  });

  it('names the Node versions .nvmrc and engines say', () => {
    const nvmrc = read('.nvmrc').trim().replace(/^v/, '').split('.')[0];
    const development = read('docs/development.md');
    expect(development).toContain(`Node ${nvmrc} (\`nodejs${nvmrc}.x\``);
    expect(development).toContain(`"engines": { "node": "${pkg.engines.node}" }`);
    const floor = /\^(\d+\.\d+)/.exec(pkg.engines.node)![1];
    expect(development).toContain(`Node ${floor} or later`);
  });

  it('gives one duration for the condition-mutant run: the one docs/testing.md measured', () => {
    const measured = Number(/(\d+(?:\.\d+)?) min\*\*/.exec(read('docs/testing.md'))![1]);
    expect(measured).toBeGreaterThan(0);
    const files = ['README.md', 'docs/testing.md', 'docs/development.md', 'CONTRIBUTING.md'];
    let stated = 0;
    for (const file of files) {
      const text = read(file);
      for (const match of text.matchAll(/test:conditions[^\n]*?(?:about|~)\s*(\d+)\s*min/g)) {
        stated++;
        const minutes = Number(match[1]);
        expect(minutes, `${file}: "${match[0]}"`).toBeGreaterThanOrEqual(measured * 0.8);
        expect(minutes, `${file}: "${match[0]}"`).toBeLessThanOrEqual(measured * 1.25);
      }
    }
    expect(stated).toBeGreaterThan(1);
  });
});
