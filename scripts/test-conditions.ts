/**
 * `npm run test:conditions [-- <store file>… | --list]`: takes every condition expression in
 * lib/store/ in turn, weakens it by one edit (a dropped clause, a swapped comparator, a flipped
 * existence check, a shortened IN list), runs that store's tests against the emulator with the
 * mutant in place, and prints the mutants no test notices. Mutants are applied in a temporary
 * copy of the tree, never in the working tree. Outside CI: see docs/testing.md for its run time.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { startEmulator } from '../lib/local/emulator.js';
import { type ConditionFragment, findConditions } from './conditions/find.js';
import { type Mutant, mutantsOf } from './conditions/mutate.js';
import { Sandbox } from './conditions/sandbox.js';
import { TESTS_BY_STORE_FILE } from './conditions/targets.js';

const repo = resolve(import.meta.dirname, '..');
const testsOverride = new Map<string, readonly string[]>();

function testsFor(name: string): readonly string[] | undefined {
  return testsOverride.get(name) ?? TESTS_BY_STORE_FILE[name];
}
const storeDir = join(repo, 'lib', 'store');

interface Located extends Mutant {
  readonly fragment: ConditionFragment;
}

function mutantsBy(files: readonly string[]): Map<string, Located[]> {
  const byFile = new Map<string, Located[]>();
  for (const fragment of findConditions(files)) {
    if (!originals.has(fragment.file)) originals.set(fragment.file, readFileSync(fragment.file, 'utf8'));
    const name = basename(fragment.file);
    const mutants = mutantsOf(fragment.text).map((mutant) => ({ ...mutant, fragment }));
    byFile.set(name, [...(byFile.get(name) ?? []), ...mutants]);
  }
  return byFile;
}

function where(mutant: Located): string {
  return `lib/store/${basename(mutant.fragment.file)}:${mutant.fragment.line}`;
}

/** Source files as they were when their conditions were found: a mutant applies to that text. */
const originals = new Map<string, string>();

function applied(mutant: Located): string {
  const { file } = mutant.fragment;
  if (!originals.has(file)) originals.set(file, readFileSync(file, 'utf8'));
  const source = originals.get(file) ?? '';
  return source.slice(0, mutant.fragment.start) + mutant.text + source.slice(mutant.fragment.end);
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const listOnly = args.includes('--list');
  // `--tests=a.test.ts,b.test.ts` judges every selected file by these tests instead of its own.
  const override = args
    .find((arg) => arg.startsWith('--tests='))
    ?.slice('--tests='.length)
    .split(',');
  if (override) for (const name of Object.keys(TESTS_BY_STORE_FILE)) testsOverride.set(name, override);
  const wanted = args.filter((arg) => !arg.startsWith('--')).map((arg) => basename(arg));
  const all = readdirSync(storeDir).filter((name) => name.endsWith('.ts'));
  const unknown = wanted.filter((name) => !all.includes(name));
  if (unknown.length > 0) throw new Error(`not in lib/store: ${unknown.join(', ')}`);
  const files = all.map((name) => join(storeDir, name));
  const byFile = mutantsBy(files);
  const selected = [...byFile.keys()].filter((name) => wanted.length === 0 || wanted.includes(name)).sort();
  const unmapped = selected.filter((name) => !testsFor(name));
  if (unmapped.length > 0)
    throw new Error(`no tests named for ${unmapped.join(', ')}: add them to scripts/conditions/targets.ts`);
  for (const name of selected) {
    const mutants = byFile.get(name) ?? [];
    console.log(`${name}: ${mutants.length} mutants → ${testsFor(name)?.join(' ')}`);
    if (listOnly)
      for (const mutant of mutants)
        console.log(`  ${where(mutant)}  ${mutant.description}${mutant.equivalent ? ' (equivalent)' : ''}`);
  }
  if (listOnly) return 0;
  return run(selected, byFile);
}

async function run(selected: readonly string[], byFile: Map<string, Located[]>): Promise<number> {
  const started = Date.now();
  const emulator = await startEmulator();
  const sandbox = new Sandbox(repo);
  const stop = (): void => {
    sandbox.remove();
    void emulator.stop();
    process.exit(130);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  const env = { ...process.env, AWS_ENDPOINT_URL: emulator.endpoint };
  const survivors: Located[] = [];
  const equivalents: Located[] = [];
  let judged = 0;
  let unjudged = 0;
  try {
    for (const name of selected) {
      const tests = testsFor(name) ?? [];
      const missing = tests.filter((test) => !existsSync(join(repo, test)));
      if (missing.length > 0) throw new Error(`${name}: no such test file ${missing.join(', ')}`);
      const baselineStarted = Date.now();
      const baseline = await sandbox.runTests(tests, env, 600_000);
      const baselineMs = Date.now() - baselineStarted;
      const mutants = byFile.get(name) ?? [];
      if (baseline === 'timeout' || baseline.length > 0) {
        console.log(
          `${name}: its tests fail without a mutant (${baseline}); ${mutants.length} mutants not judged`,
        );
        unjudged += mutants.length;
        continue;
      }
      console.log(`${name}: tests pass in ${(baselineMs / 1000).toFixed(0)} s; ${mutants.length} mutants`);
      for (const mutant of mutants) {
        if (mutant.equivalent) {
          equivalents.push(mutant);
          console.log(`  equivalent ${where(mutant)}  ${mutant.description}  (${mutant.equivalent})`);
          continue;
        }
        const verdict = await sandbox.withEdited(mutant.fragment.file, applied(mutant), () =>
          sandbox.runTests(tests, env, Math.max(60_000, 3 * baselineMs)),
        );
        judged++;
        const killed = verdict === 'timeout' || verdict.length > 0;
        if (!killed) survivors.push(mutant);
        const by = verdict === 'timeout' ? 'timeout' : verdict[0];
        console.log(
          `  ${killed ? 'killed  ' : 'SURVIVED'} ${where(mutant)}  ${mutant.description}${by ? `  (${by})` : ''}`,
        );
      }
    }
  } finally {
    process.removeListener('SIGINT', stop);
    process.removeListener('SIGTERM', stop);
    sandbox.remove();
    await emulator.stop();
  }
  if (equivalents.length > 0) console.log(`\n${equivalents.length} equivalent mutants, not run:`);
  for (const mutant of equivalents)
    console.log(`  ${where(mutant)}  ${mutant.description}: ${mutant.equivalent}`);
  console.log(`\n${survivors.length} surviving mutants:`);
  for (const mutant of survivors)
    console.log(`  ${where(mutant)}  ${mutant.description}\n      ${mutant.fragment.text} ⇒ ${mutant.text}`);
  const minutes = ((Date.now() - started) / 60_000).toFixed(1);
  console.log(
    `\n${judged} mutants judged, ${judged - survivors.length} killed, ${survivors.length} survived` +
      `, ${equivalents.length} equivalent` +
      `${unjudged > 0 ? `, ${unjudged} not judged (tests red without a mutant)` : ''}; ${minutes} min`,
  );
  return survivors.length > 0 || unjudged > 0 ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(2);
  },
);
