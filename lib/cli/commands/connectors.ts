import type { Command } from 'commander';
import { CONNECTOR_CHOICES, oneOf } from '../choices.js';
import { contextOf } from '../context.js';
import { examples } from '../help.js';
import { type Io, printJson, printLines, printTable } from '../output.js';

// biome-ignore lint/suspicious/noExplicitAny: JSON Schema is walked as plain JSON
type JsonSchema = Record<string, any>;

/** One config field as `connectors describe` shows it. */
export interface FieldDoc {
  readonly path: string;
  readonly type: string;
  readonly required: boolean;
  readonly default?: unknown;
  readonly description: string;
}

function typeOf(schema: JsonSchema): string {
  if (schema.enum) return schema.enum.map((v: unknown) => JSON.stringify(v)).join(' | ');
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  const variants = schema.anyOf ?? schema.oneOf;
  if (variants) return variants.map(typeOf).join(' | ');
  if (schema.type === 'array') return `${typeOf(schema.items ?? {})}[]`;
  if (schema.type === 'object' && schema.additionalProperties && !schema.properties) return 'map of string';
  return schema.type ?? 'any';
}

/**
 * The fields of a config's JSON Schema, nested objects flattened to dot paths (union variants
 * of an object, like rest-json's `pagination`, each listed under the value that selects them).
 */
export function fieldsOf(schema: JsonSchema, prefix = ''): FieldDoc[] {
  const required = new Set<string>(schema.required ?? []);
  return Object.entries((schema.properties ?? {}) as Record<string, JsonSchema>).flatMap(([name, field]) => {
    const path = prefix ? `${prefix}.${name}` : name;
    const variants: JsonSchema[] = (field.anyOf ?? field.oneOf ?? []).filter((v: JsonSchema) => v.properties);
    const nested = field.properties ? fieldsOf(field, path) : [];
    const byVariant = variants.flatMap((v) => {
      const tag = Object.entries(v.properties as Record<string, JsonSchema>).find(
        ([, p]) => p.const !== undefined,
      );
      return fieldsOf(v, tag ? `${path}(${tag[0]}=${tag[1].const})` : path);
    });
    const doc: FieldDoc = {
      path,
      type: field.properties ? 'object' : variants.length > 0 ? 'object (one of)' : typeOf(field),
      required: required.has(name),
      ...(field.default !== undefined ? { default: field.default } : {}),
      description: field.description ?? variants.find((v) => v.description)?.description ?? '',
    };
    return [doc, ...nested, ...byVariant];
  });
}

/** `harvester connectors list|describe`: what each connector reads and how it is configured, from its schema. */
export function registerConnectorCommands(program: Command, io: Io): void {
  const connectors = program
    .command('connectors')
    .addHelpText('after', examples('connectors list', 'connectors describe rest-json'))
    .description('the connectors a source can use, and their config fields');

  connectors
    .command('list')
    .addHelpText('after', examples('connectors list', 'connectors list --json'))
    .description('list the connectors: name, what it harvests, whether its stream is ordered')
    .action(async (_opts: unknown, cmd: Command) => {
      const ctx = contextOf(cmd, io);
      // Loaded on demand: the other commands start without the connectors' code.
      const { CONNECTORS } = await import('../../connectors/registry.js');
      const rows = Object.entries(CONNECTORS).map(([name, c]) => ({
        name,
        entityType: c.manifest.entityType,
        orderedByModifiedTime: c.manifest.orderedByModifiedTime,
      }));
      if (ctx.json) return printJson(io, rows);
      printTable(
        io,
        ['CONNECTOR', 'ENTITY', 'ORDERED BY MODIFICATION TIME'],
        rows.map((r) => [r.name, r.entityType, r.orderedByModifiedTime ? 'yes' : 'no (or per config)']),
      );
      printLines(io, [`its config: ${ctx.hint('connectors describe rest-json')}`]);
    });

  connectors
    .command('describe <connector>')
    .addHelpText(
      'after',
      examples('connectors describe github-issues', 'connectors describe rest-json --json'),
    )
    .description('the config fields of a connector (type, default, description) and an example config')
    .action(async (name: string, _opts: unknown, cmd: Command) => {
      const ctx = contextOf(cmd, io);
      const connector = oneOf('<connector>', CONNECTOR_CHOICES)(name);
      const [{ CONNECTORS }, { configJsonSchema }] = await Promise.all([
        import('../../connectors/registry.js'),
        import('../../connectors/config-docs.js'),
      ]);
      const schema = configJsonSchema(CONNECTORS[connector].configSchema) as JsonSchema;
      const fields = fieldsOf(schema);
      const example = schema.examples?.[0] ?? null;
      if (ctx.json) return printJson(io, { connector, fields, example });
      const lines = [`${connector} config fields:`];
      for (const f of fields) {
        const flags = [
          f.required ? 'required' : undefined,
          f.default !== undefined ? `default ${JSON.stringify(f.default)}` : undefined,
        ]
          .filter(Boolean)
          .join(', ');
        lines.push(`  ${f.path}  ${f.type}${flags ? ` (${flags})` : ''}`, `      ${f.description}`);
      }
      if (example) lines.push('', 'example config:', JSON.stringify(example, null, 2));
      lines.push(
        '',
        `use it: ${ctx.hint(`sources put my-source --connector ${connector} --config @examples/connectors/${connector}.json`)}`,
      );
      printLines(io, lines);
    });
}
