import type { z } from 'zod';
import type { ItemExplanationSchema, ItemPageSchema } from '../../lib/api/schemas/items.js';
import type { LocalStack } from '../../lib/local/local-stack.js';
import type { Check } from './verify.js';

type ItemPage = z.infer<typeof ItemPageSchema>;
type ItemExplanation = z.infer<typeof ItemExplanationSchema>;

async function get<T>(stack: LocalStack, path: string): Promise<T> {
  const response = await fetch(`${stack.apiUrl}${path}`);
  if (!response.ok) throw new Error(`GET ${path} answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as T;
}

function clip(text: string, width: number): string {
  return text.length <= width ? text : `${text.slice(0, width - 1)}…`;
}

/**
 * The demo's last act: what was harvested, read back through the items API as a user would
 * (`harvester items list`, `harvester items explain`): three entities with their provenance, and
 * the story of one entity — preferably one that failed and was recovered by the retry.
 */
export async function showHarvested(
  stack: LocalStack,
  sourceId: string,
  recovered: readonly string[],
  say: (line?: string) => void,
): Promise<Check[]> {
  const page = await get<ItemPage>(stack, `/sources/${sourceId}/items?limit=3`);
  say();
  say(`What was harvested (harvester items list ${sourceId} --limit 3):`);
  for (const item of page.items) {
    const title = typeof item.data.title === 'string' ? item.data.title : JSON.stringify(item.data);
    say(
      `  #${item.entityId.padEnd(6)} ${item.version}  "${clip(title, 40)}"  stored by ${item.provenance.mode} run ${item.provenance.runId}, page ${item.provenance.page}`,
    );
  }
  const entityId = recovered[0] ?? page.items[0]?.entityId ?? '1';
  const story = await get<ItemExplanation>(
    stack,
    `/sources/${sourceId}/items/${encodeURIComponent(entityId)}/explain`,
  );
  say();
  say(`Why is #${entityId} as it is? (harvester items explain ${sourceId} ${entityId})`);
  say(`  ${story.summary}`);
  if (story.item?.provenance.request) say(`  fetched from ${story.item.provenance.request}`);
  return [
    {
      name: 'the items API lists harvested entities with provenance',
      ok: page.items.length === 3 && page.items.every((i) => i.provenance.page !== null),
    },
    { name: 'explain tells an entity’s story', ok: story.status === 'stored' && story.summary.length > 0 },
  ];
}
