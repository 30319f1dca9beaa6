import { call, type Page, type Source } from './api.js';
import { field, h } from './dom.js';

/** A labelled select of every source, `chosen` selected (else the first). */
export async function sourcePicker(chosen: string | null): Promise<HTMLSelectElement> {
  const answer = await call<Page<Source>>('GET', '/sources?limit=100');
  const select = h('select', { name: 'source' });
  for (const s of answer.ok ? answer.body.items : [])
    select.append(h('option', { value: s.sourceId, selected: s.sourceId === chosen }, s.sourceId));
  return select;
}

/** The picker in its label. */
export function sourceField(select: HTMLSelectElement): HTMLLabelElement {
  return field('Source', select);
}
