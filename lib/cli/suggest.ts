import type { Problem } from '../api/problems.js';
import { closest } from './choices.js';
import type { ApiClient } from './client.js';

/** How many sources are read to find the one a mistyped id meant (one page of the listing). */
const SOURCES_LOOKED_AT = 100;

/**
 * Follow-up lines for a "source not found": the source id the user most likely meant (among the
 * first page of sources) and the command that lists them all. Nothing when the problem is another
 * one, and only the listing hint when the sources cannot be read.
 *
 * @example
 * // harvester runs start acne --mode full
 * // error: source acne not found
 * //   did you mean acme?
 * //   list the sources: harvester --endpoint http://127.0.0.1:8787 sources list
 */
export async function notFoundHints(
  problem: Problem,
  client: () => Promise<ApiClient>,
  hint: (args: string) => string,
): Promise<string[]> {
  if (problem.sourceId === undefined) return [];
  const lines: string[] = [];
  try {
    const page = await (await client()).get<{ items: { sourceId: string }[] }>('/sources', {
      limit: SOURCES_LOOKED_AT,
    });
    const ids = page.items.map((s) => s.sourceId);
    const meant = closest(problem.sourceId, ids);
    if (meant) lines.push(`  did you mean ${meant}?`);
    else if (ids.length === 0) lines.push('  there are no sources yet');
  } catch {
    // The listing is only a courtesy: the refusal above already says what is wrong.
  }
  lines.push(`  list the sources: ${hint('sources list')}`);
  return lines;
}
