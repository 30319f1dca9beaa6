/**
 * `npm run test:unused-values [-- <store file>… | --list]`: for each `ExpressionAttributeValues`
 * object literal in lib/store/, adds one value no expression uses (`':harvesterUnused': 0`), runs
 * that store's tests against the emulator with the strict DynamoDB layer on, and prints the
 * mutants no test notices. Real DynamoDB refuses such a request outright, so a survivor is a
 * write no test sends through the strict layer: a refusal on AWS nobody would see coming.
 * Mutants are applied in a temporary copy of the tree (see `conditions/sandbox.ts`).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { startEmulator } from '../lib/local/emulator.js';
import { Sandbox } from './conditions/sandbox.js';
import { TESTS_BY_STORE_FILE } from './conditions/targets.js';

const repo = resolve(import.meta.dirname, '..');
const storeDir = join(repo, 'lib', 'store');
const UNUSED = "':harvesterUnused': 0,";
const LITERAL = /ExpressionAttributeValues:\s*\{/g;

/** Store files whose values have no conditions to judge, so the condition targets do not name them. */
const EXTRA_TESTS: Readonly<Record<string, readonly string[]>> = {
  'item-listing.ts': ['test/integration/items-api.test.ts'],
  'run-listings.ts': ['test/integration/api.test.ts'],
};

function testsFor(name: string): readonly string[] | undefined {
  return TESTS_BY_STORE_FILE[name] ?? EXTRA_TESTS[name];
}

interface Mutant {
  readonly file: string;
  readonly line: number;
  readonly text: string;
}

/** One mutant per `ExpressionAttributeValues: {` in `file`: the unused value first in the literal. */
function mutantsOf(file: string): Mutant[] {
  const source = readFileSync(file, 'utf8');
  return [...source.matchAll(LITERAL)].map((match) => {
    const at = (match.index ?? 0) + match[0].length;
    return {
      file,
      line: source.slice(0, at).split('\n').length,
      text: `${source.slice(0, at)} ${UNUSED}${source.slice(at)}`,
    };
  });
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const wanted = args.filter((arg) => !arg.startsWith('--')).map((arg) => basename(arg));
  const all = readdirSync(storeDir).filter((name) => name.endsWith('.ts'));
  const unknown = wanted.filter((name) => !all.includes(name));
  if (unknown.length > 0) throw new Error(`not in lib/store: ${unknown.join(', ')}`);
  const byFile = new Map(
    all
      .filter((name) => wanted.length === 0 || wanted.includes(name))
      .map((name) => [name, mutantsOf(join(storeDir, name))] as const)
      .filter(([, mutants]) => mutants.length > 0),
  );
  const unmapped = [...byFile.keys()].filter((name) => !testsFor(name));
  if (unmapped.length > 0)
    throw new Error(`no tests named for ${unmapped.join(', ')}: add them to EXTRA_TESTS`);
  for (const [name, mutants] of byFile) {
    console.log(`${name}: ${mutants.length} value literals → ${testsFor(name)?.join(' ')}`);
    if (args.includes('--list'))
      for (const mutant of mutants) console.log(`  lib/store/${name}:${mutant.line}`);
  }
  if (args.includes('--list')) return 0;
  return run(byFile);
}

async function run(byFile: ReadonlyMap<string, readonly Mutant[]>): Promise<number> {
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
  // The layer must throw, whatever the caller's shell asks for: a report would kill nothing.
  const env = { ...process.env, AWS_ENDPOINT_URL: emulator.endpoint, HARVESTER_STRICT_DYNAMODB: 'on' };
  const survivors: Mutant[] = [];
  let judged = 0;
  let unjudged = 0;
  try {
    for (const [name, mutants] of byFile) {
      const tests = testsFor(name) ?? [];
      const missing = tests.filter((test) => !existsSync(join(repo, test)));
      if (missing.length > 0) throw new Error(`${name}: no such test file ${missing.join(', ')}`);
      const baselineStarted = Date.now();
      const baseline = await sandbox.runTests(tests, env, 600_000);
      const baselineMs = Date.now() - baselineStarted;
      if (baseline === 'timeout' || baseline.length > 0) {
        console.log(`${name}: its tests fail without a mutant (${baseline}); ${mutants.length} not judged`);
        unjudged += mutants.length;
        continue;
      }
      console.log(`${name}: tests pass in ${(baselineMs / 1000).toFixed(0)} s; ${mutants.length} mutants`);
      for (const mutant of mutants) {
        const verdict = await sandbox.withEdited(mutant.file, mutant.text, () =>
          sandbox.runTests(tests, env, Math.max(60_000, 3 * baselineMs)),
        );
        judged++;
        const killed = verdict === 'timeout' || verdict.length > 0;
        if (!killed) survivors.push(mutant);
        const by = verdict === 'timeout' ? 'timeout' : verdict[0];
        console.log(
          `  ${killed ? 'killed  ' : 'SURVIVED'} lib/store/${name}:${mutant.line}${by ? `  (${by})` : ''}`,
        );
      }
    }
  } finally {
    process.removeListener('SIGINT', stop);
    process.removeListener('SIGTERM', stop);
    sandbox.remove();
    await emulator.stop();
  }
  console.log(`\n${survivors.length} surviving mutants:`);
  for (const mutant of survivors) console.log(`  lib/store/${basename(mutant.file)}:${mutant.line}`);
  const minutes = ((Date.now() - started) / 60_000).toFixed(1);
  console.log(
    `\n${judged} mutants judged, ${judged - survivors.length} killed, ${survivors.length} survived` +
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
