import type { Command } from 'commander';
import type { z } from 'zod';
import type { SecretBindingsViewSchema } from '../../api/schemas/secret-bindings.js';
import { CliUsageError, collect, contextOf } from '../context.js';
import { examples } from '../help.js';
import { type Io, printJson, printLines } from '../output.js';

type SecretBindingsView = z.infer<typeof SecretBindingsViewSchema>;

/**
 * `--secret ssm:/harvester/acme/token=https://api.acme.example,https://uploads.acme.example`:
 * a reference, `=`, and the origins it may go to. The reference ends at the first `=` followed
 * by `http(s)://` (Secrets Manager names may themselves contain `=`).
 */
export function parseSecretOption(value: string): { reference: string; origins: string[] } {
  const match = /^(.+?)=(https?:\/\/.+)$/i.exec(value.trim());
  const origins = (match?.[2] ?? '')
    .split(',')
    .map((origin) => origin.trim())
    .filter((origin) => origin.length > 0);
  if (!match?.[1] || origins.length === 0)
    throw new CliUsageError(
      `--secret "${value}" must be <reference>=<origin>[,<origin>…], e.g. "ssm:/harvester/acme/token=https://api.acme.example"`,
    );
  return { reference: match[1], origins };
}

function bindingLines(view: SecretBindingsView): string[] {
  const entries = Object.entries(view.bindings);
  if (entries.length === 0) return [`source ${view.sourceId} has no secret bindings`];
  return [
    `secret bindings of ${view.sourceId} (updated ${view.updatedAt ?? 'never'})`,
    ...entries.map(([reference, origins]) => `  ${reference} → ${origins.join(', ')}`),
  ];
}

const BIND_EXAMPLE = `
Replaces every binding of the source: list each of its secrets, with all its origins.
Only a caller allowed PUT /secret-bindings/* may do this; editing sources does not imply it.

Example:
  $ harvester secrets bind acme \\
      --secret ssm:/harvester/acme/token=https://api.acme.example
  $ harvester sources put acme --connector rest-json --config @acme.json`;

/** `harvester secrets bind|show`: where a source's own secrets may be sent. */
export function registerSecretCommands(program: Command, io: Io): void {
  const secrets = program
    .command('secrets')
    .addHelpText(
      'after',
      examples(
        'secrets show acme',
        'secrets bind acme --secret ssm:/harvester/acme/token=https://api.acme.example',
      ),
    )
    .description("bind a source's secrets to the origins they may be sent to");

  secrets
    .command('bind <sourceId>')
    .description("bind the source's own secrets to origins (replaces its bindings as a whole)")
    .requiredOption(
      '--secret <reference=origins>',
      'a secret reference and the comma-separated origins it may be sent to (repeatable)',
      collect,
      [],
    )
    .addHelpText('after', BIND_EXAMPLE)
    .action(async (sourceId: string, opts: { secret: string[] }, cmd: Command) => {
      const ctx = contextOf(cmd, io);
      const bindings: Record<string, string[]> = {};
      for (const { reference, origins } of opts.secret.map(parseSecretOption)) {
        bindings[reference] = [...(bindings[reference] ?? []), ...origins];
      }
      const view = await (await ctx.client()).request<SecretBindingsView>(
        'PUT',
        `/secret-bindings/${encodeURIComponent(sourceId)}`,
        { bindings },
      );
      if (ctx.json) return printJson(io, view);
      printLines(io, bindingLines(view));
    });

  secrets
    .command('show <sourceId>')
    .description("show where the source's own secrets may be sent")
    .addHelpText('after', '\nExample:\n  $ harvester secrets show acme')
    .action(async (sourceId: string, _opts: unknown, cmd: Command) => {
      const ctx = contextOf(cmd, io);
      const view = await (await ctx.client()).get<SecretBindingsView>(
        `/secret-bindings/${encodeURIComponent(sourceId)}`,
      );
      if (ctx.json) return printJson(io, view);
      printLines(io, bindingLines(view));
    });
}
