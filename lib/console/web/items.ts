import { call, type Page, path, problemText } from './api.js';
import { field, h, status, when } from './dom.js';
import { sourceField, sourcePicker } from './sources.js';

/**
 * Items: look an entity id up — the explain answer's sentence and the stored row's provenance
 * (which run, page and request wrote it) — and browse the source's changes of the last day.
 */

interface Item {
  readonly entityId: string;
  readonly version: string;
  readonly changedAt: string | null;
  readonly tombstonedAt: string | null;
  readonly provenance: Record<string, unknown>;
}

interface Explanation {
  readonly status: string;
  readonly summary: string;
  readonly item: Item | null;
  readonly [field: string]: unknown;
}

const DAY_MS = 24 * 60 * 60 * 1000;

function explainBlock(answer: { ok: boolean; status: number; body: unknown }): HTMLElement {
  if (!answer.ok) return h('p', {}, problemText(answer));
  const e = answer.body as Explanation;
  const provenance = e.item?.provenance ?? {};
  return h(
    'section',
    { 'aria-label': 'Explanation' },
    h('p', { class: 'sentence', 'data-field': 'explain' }, e.summary),
    h('p', {}, 'Status: ', h('strong', { 'data-field': 'item-status' }, e.status)),
    h(
      'dl',
      { class: 'facts' },
      ...Object.entries(provenance).flatMap(([k, v]) => [
        h('dt', {}, k),
        h('dd', {}, v === null ? '—' : typeof v === 'object' ? JSON.stringify(v) : String(v)),
      ]),
    ),
    h(
      'details',
      {},
      h('summary', {}, 'The whole answer'),
      h('pre', { class: 'json' }, JSON.stringify(e, null, 2)),
    ),
  );
}

/** Renders the items view (`source`, `id` in `params`). */
export async function itemsView(root: HTMLElement, params: URLSearchParams): Promise<void> {
  const picker = await sourcePicker(params.get('source'));
  const id = h('input', { name: 'id', value: params.get('id') ?? '', required: true, autocomplete: 'off' });
  const form = h(
    'form',
    {
      class: 'filters',
      onsubmit: (event: Event) => {
        event.preventDefault();
        location.hash = `#/items?${new URLSearchParams({ source: picker.value, id: id.value })}`;
      },
    },
    sourceField(picker),
    field('Entity id', id),
    h('button', { type: 'submit' }, 'Explain'),
  );
  const line = status();
  const answer = h('div');
  const changes = h('section', { 'aria-label': 'Recent changes' });
  root.replaceChildren(
    h('h1', {}, 'Items'),
    form,
    line,
    answer,
    h('h2', {}, 'Changed in the last day (oldest first, up to 50)'),
    changes,
  );
  const sourceId = picker.value;
  if (!sourceId) {
    line.textContent = 'no sources yet';
    return;
  }
  const entity = params.get('id');
  if (entity)
    answer.replaceChildren(
      explainBlock(await call('GET', `${path('sources', sourceId, 'items', entity)}/explain`)),
    );
  const since = new Date(Date.now() - DAY_MS).toISOString();
  const page = await call<Page<Item>>(
    'GET',
    `${path('sources', sourceId, 'items')}?${new URLSearchParams({ changedSince: since, limit: '50' })}`,
  );
  if (!page.ok) return void changes.replaceChildren(problemText(page));
  if (page.body.items.length === 0)
    return void changes.replaceChildren(h('p', { class: 'muted' }, 'no changes'));
  changes.replaceChildren(
    h(
      'table',
      { 'aria-label': 'Recent changes' },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ...['Entity', 'Version', 'Changed', 'Tombstoned'].map((c) => h('th', { scope: 'col' }, c)),
        ),
      ),
      h(
        'tbody',
        {},
        ...page.body.items.map((item) =>
          h(
            'tr',
            {},
            h(
              'td',
              {},
              h(
                'a',
                { href: `#/items?${new URLSearchParams({ source: sourceId, id: item.entityId })}` },
                item.entityId,
              ),
            ),
            h('td', {}, item.version),
            h('td', {}, when(item.changedAt)),
            h('td', {}, when(item.tombstonedAt)),
          ),
        ),
      ),
    ),
  );
}
