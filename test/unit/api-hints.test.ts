import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseSecretOption } from '../../lib/cli/commands/secrets.js';
import { runCli } from '../../lib/cli/main.js';
import { CLI_COMMANDS, shellWord } from '../../lib/config/cli-commands.js';
import { captureIo } from '../support/cli-io.js';

/**
 * The API's refusals point to the CLI command that fixes them, written so it can be pasted: the
 * shell reads every argument back as written, and the command is one the CLI knows.
 */

/** The words a POSIX shell reads from `line`. */
function shellWords(line: string): string[] {
  const out = execFileSync('sh', [
    '-c',
    `for w in ${line.replace(/^harvester /, '')}; do printf '%s\\0' "$w"; done`,
  ]);
  return out.toString().split('\0').slice(0, -1);
}

describe('hint commands', () => {
  it.each([
    ['acme', 'acme'],
    ['a b', "'a b'"],
    ["it's", `'it'\\''s'`],
    ['$HOME;rm', "'$HOME;rm'"],
  ])('shellWord(%j) reads back as written', (word, quoted) => {
    expect(shellWord(word)).toBe(quoted);
    expect(shellWords(`harvester ${quoted}`)).toEqual([word]);
  });

  it('secretsBind lists every binding, each as the --secret the CLI parses back', () => {
    const bindings = {
      'ssm:/harvester/acme/token': ['https://api.acme.example', 'https://uploads.acme.example'],
      'secretsmanager:harvester/acme/key=v2': ['https://api.acme.example'],
    };
    const command = CLI_COMMANDS.secretsBind('acme', bindings);
    const [, , sourceId, ...rest] = shellWords(command);

    expect(command.startsWith('harvester secrets bind acme --secret ')).toBe(true);
    expect(sourceId).toBe('acme');
    const secrets = rest.filter((_, i) => i % 2 === 1).map(parseSecretOption);
    expect(Object.fromEntries(secrets.map((s) => [s.reference, s.origins]))).toEqual(bindings);
  });

  it.each([
    CLI_COMMANDS.secretsBind('acme', { 'ssm:/harvester/acme/token': ['https://api.acme.example'] }),
    CLI_COMMANDS.secretsShow('acme'),
    CLI_COMMANDS.runsWatch('01J9ZQ4T7J8Y2K3M4N5P6Q7R8S'),
    CLI_COMMANDS.runsCancel('01J9ZQ4T7J8Y2K3M4N5P6Q7R8S'),
    CLI_COMMANDS.dlqRetry('acme'),
  ])('%s is a command the CLI knows (its --help answers)', async (command) => {
    const words = shellWords(command).filter(
      (w, i, all) => !w.startsWith('--') && !all[i - 1]?.startsWith('--'),
    );
    const io = captureIo();
    const code = await runCli(['node', 'harvester', ...words.slice(0, 2), '--help'], io);

    expect(code).toBe(0);
    expect(io.stdout()).toContain(`Usage: harvester ${words.slice(0, 2).join(' ')}`);
  });
});

describe('refusal texts', () => {
  // Files whose strings reach a caller as a refusal or a hint.
  const files = [
    'lib/api/problems.ts',
    'lib/api/binding-guard.ts',
    'lib/api/source-guard.ts',
    'lib/api/secret-guard.ts',
    'lib/api/item-explain.ts',
    'lib/connectors/secret-origins.ts',
  ];

  it.each(files)('%s names no raw route in a message (a harvester command instead)', (file) => {
    const code = readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8')
      .split('\n')
      .filter((line) => !/^\s*(\*|\/\/|\/\*\*)/.test(line));

    expect(code.filter((line) => /(PUT|POST|GET|DELETE|PATCH) \/[a-z{]/.test(line))).toEqual([]);
  });

  it('the root help example names an endpoint the stack serves: the $default stage, no /prod', async () => {
    const io = captureIo();
    await runCli(['node', 'harvester', '--help'], io);

    expect(io.stdout()).toContain(
      '--endpoint https://abc123.execute-api.eu-west-1.amazonaws.com sources list',
    );
    expect(io.stdout()).not.toMatch(/amazonaws\.com\/\w/);
  });
});
