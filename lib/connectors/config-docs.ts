import { z } from 'zod';

/**
 * A connector config schema as JSON Schema of what a user writes (defaults optional), with its
 * field descriptions and its example config. The OpenAPI document and `harvester connectors
 * describe` both render it, so the documentation lives once, in the schema.
 */
export function configJsonSchema(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _dialect, ...json } = z.toJSONSchema(schema, { io: 'input' }) as Record<string, unknown>;
  // zod leaves `examples` out of input-side JSON Schema when a field transforms its value (an
  // example is typed as the output); a connector's example is a config as written, so it belongs.
  const examples = z.globalRegistry.get(schema)?.examples;
  return examples && !json.examples ? { ...json, examples } : json;
}
