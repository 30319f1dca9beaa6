import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../../lib/api/openapi.js';
import { API_ROUTES } from '../../lib/api/routes/index.js';
import { connectorConfigId } from '../../lib/api/schemas/sources.js';
import { runCli } from '../../lib/cli/main.js';
import { CONNECTOR_NAMES, CONNECTORS } from '../../lib/connectors/registry.js';
import { captureIo } from '../support/cli-io.js';

/**
 * A connector's config is documented where users look: every field carries a description in its
 * schema, which the OpenAPI document and `harvester connectors describe` show, and each connector
 * has an example config under examples/connectors/ that its schema accepts.
 */

// biome-ignore lint/suspicious/noExplicitAny: the document is walked as plain JSON
type Json = any;
const doc: Json = JSON.parse(JSON.stringify(buildOpenApiDocument(API_ROUTES)));

/** Dot paths of the properties under `node` that have no description. */
function undocumented(node: Json, path: string, found: string[] = []): string[] {
  if (!node || typeof node !== 'object') return found;
  for (const [key, value] of Object.entries((node.properties ?? {}) as Record<string, Json>)) {
    const at = path ? `${path}.${key}` : key;
    const described = typeof value.description === 'string' && value.description.length > 0;
    const variantsDescribed = [...(value.anyOf ?? []), ...(value.oneOf ?? [])].some(
      (v: Json) => typeof v.description === 'string',
    );
    if (!described && !variantsDescribed) found.push(at);
    undocumented(value, at, found);
  }
  for (const variant of [...(node.anyOf ?? []), ...(node.oneOf ?? []), ...(node.allOf ?? [])])
    undocumented(variant, path, found);
  if (node.items) undocumented(node.items, `${path}[]`, found);
  return found;
}

const EXAMPLES = new URL('../../examples/connectors/', import.meta.url);

describe('connector configs, documented', () => {
  it.each(CONNECTOR_NAMES)('every %s config field has a description in the OpenAPI document', (name) => {
    const schema = doc.components.schemas[connectorConfigId(name)];
    expect(Object.keys(schema.properties).length).toBeGreaterThan(0);
    expect(undocumented(schema, '')).toEqual([]);
  });

  it.each(CONNECTOR_NAMES)(
    'examples/connectors/%s.json is a config its schema accepts, and the schema’s own example',
    (name) => {
      const config = JSON.parse(readFileSync(new URL(`${name}.json`, EXAMPLES), 'utf8'));
      expect(() => CONNECTORS[name].configSchema.parse(config)).not.toThrow();
      expect(doc.components.schemas[connectorConfigId(name)].examples).toEqual([config]);
    },
  );

  it('has no example for a connector that does not exist', () => {
    const files = readdirSync(EXAMPLES).filter((f) => f.endsWith('.json'));
    expect(files.sort()).toEqual(CONNECTOR_NAMES.map((n) => `${n}.json`).sort());
  });

  it('harvester connectors list names every connector with its entity type', async () => {
    const io = captureIo();
    expect(await runCli(['node', 'harvester', 'connectors', 'list'], io)).toBe(0);
    for (const name of CONNECTOR_NAMES) expect(io.stdout()).toMatch(new RegExp(`^${name}\\s`, 'm'));
  });

  it.each(CONNECTOR_NAMES)(
    'harvester connectors describe %s shows each field with type, default and description, and the example',
    async (name) => {
      const io = captureIo();
      expect(await runCli(['node', 'harvester', 'connectors', 'describe', name], io)).toBe(0);
      const schema = doc.components.schemas[connectorConfigId(name)];
      for (const [field, spec] of Object.entries(schema.properties as Record<string, Json>)) {
        expect(io.stdout()).toMatch(new RegExp(`^  ${field}\\s`, 'm'));
        if (spec.description) expect(io.stdout()).toContain(spec.description.split('\n')[0].slice(0, 40));
      }
      const example = readFileSync(new URL(`${name}.json`, EXAMPLES), 'utf8');
      expect(io.stdout()).toContain(JSON.stringify(JSON.parse(example), null, 2));
    },
  );

  it('connectors describe refuses an unknown connector with the closest name', async () => {
    const io = captureIo();
    expect(await runCli(['node', 'harvester', 'connectors', 'describe', 'github'], io)).toBe(2);
    expect(io.stderr()).toContain('did you mean');
  });
});
