import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { DETAIL_SCHEMAS, detailJsonSchema } from '../lib/events/details.js';

/** Writes docs/events/<name>.schema.json from the event detail schemas: `npx tsx scripts/event-schemas.ts`. */
for (const name of Object.keys(DETAIL_SCHEMAS) as (keyof typeof DETAIL_SCHEMAS)[]) {
  const path = fileURLToPath(new URL(`../docs/events/${name}.schema.json`, import.meta.url));
  writeFileSync(path, `${JSON.stringify(detailJsonSchema(name), null, 2)}\n`);
  console.log(`wrote ${path}`);
}
