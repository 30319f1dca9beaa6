import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
let unpacked: string;
let files: string[];

beforeAll(() => {
  const out = mkdtempSync(join(tmpdir(), 'harvester-pack-'));
  // `npm pack` runs `prepare`, which bundles the CLI into dist/cli.
  const report = JSON.parse(
    execFileSync('npm', ['pack', '--json', '--pack-destination', out], { cwd: ROOT, encoding: 'utf8' }),
  ) as { filename: string; files: { path: string }[] }[];
  files = (report[0]?.files ?? []).map((f) => f.path);
  unpacked = mkdtempSync(join(tmpdir(), 'harvester-unpacked-'));
  execFileSync('tar', ['-xzf', join(out, report[0]!.filename), '-C', unpacked]);
}, 120_000);

describe('the npm package', () => {
  it('holds the CLI bundle, the construct and its sources, and no tests', () => {
    expect(files).toContain('dist/cli/main.mjs');
    expect(files).toContain('bin/harvester.mjs');
    expect(files).toContain('infra/index.ts');
    expect(files).toContain('functions/page-worker.ts');
    expect(files.some((f) => f.startsWith('test/') || f.startsWith('node_modules/'))).toBe(false);
  });

  it('runs `harvester --help` from an empty folder with nothing installed', () => {
    const empty = mkdtempSync(join(tmpdir(), 'harvester-empty-'));
    const help = execFileSync('node', [join(unpacked, 'package', 'bin', 'harvester.mjs'), '--help'], {
      cwd: empty,
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '', HOME: empty },
    });
    expect(help).toMatch(/Usage: harvester/);
    expect(readdirSync(empty)).toEqual([]);
  });
});
