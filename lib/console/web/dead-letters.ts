import { call, type Page, path, problemText } from './api.js';
import { type DeadLetter, deadLetterTable } from './dead-letter-table.js';
import { field, h, link, status } from './dom.js';
import { sourceField, sourcePicker } from './sources.js';

/**
 * Dead letters: a source's entries filtered by run, class and reason (open, or the discarded
 * ones with who, when and why); select some and discard them with a reason, discard every
 * entry the filter matches (the bulk discard API, call by call), or retry the failed ones.
 */

type Filter = { runId?: string; errorClass?: string; reasonMatch?: string };

function filterOf(params: URLSearchParams): Filter {
  const filter: Filter = {};
  for (const key of ['runId', 'errorClass', 'reasonMatch'] as const) {
    const value = params.get(key);
    if (value) filter[key] = value;
  }
  return filter;
}

async function discardMatching(sourceId: string, filter: Filter, reason: string): Promise<string> {
  let discarded = 0;
  let skipped = 0;
  let cursor: string | null = null;
  do {
    const answer: Awaited<
      ReturnType<typeof call<{ discarded: number; skipped: number; nextCursor: string | null }>>
    > = await call('POST', `${path('sources', sourceId, 'dead-letters')}/discard`, {
      filter,
      reason,
      ...(cursor ? { cursor } : {}),
    });
    if (!answer.ok) return `discard stopped after ${discarded}: ${problemText(answer)}`;
    discarded += answer.body.discarded;
    skipped += answer.body.skipped;
    cursor = answer.body.nextCursor;
  } while (cursor);
  return `discarded ${discarded} dead letters${skipped ? ` (${skipped} skipped: changed since read)` : ''}`;
}

async function discardSelected(sourceId: string, ids: string[], reason: string): Promise<string> {
  const answers = await Promise.all(
    ids.map((id) => call('POST', `${path('sources', sourceId, 'dead-letters', id)}/discard`, { reason })),
  );
  const refused = answers.filter((a) => !a.ok);
  return `discarded ${ids.length - refused.length} dead letters${refused.length ? `; ${refused.length} refused (${problemText(refused[0]!)})` : ''}`;
}

async function detail(region: HTMLElement, sourceId: string, entryId: string): Promise<void> {
  const answer = await call('GET', path('sources', sourceId, 'dead-letters', entryId));
  region.replaceChildren(
    h('h2', { tabindex: '-1' }, `Entry ${entryId}`),
    h('pre', { class: 'json' }, answer.ok ? JSON.stringify(answer.body, null, 2) : problemText(answer)),
  );
  region.querySelector<HTMLElement>('h2')?.focus();
}

/** Renders the dead-letters view for the filter in `params` (`source`, `runId`, …, `state`). */
export async function deadLettersView(root: HTMLElement, params: URLSearchParams): Promise<void> {
  const picker = await sourcePicker(params.get('source'));
  const sourceId = picker.value;
  const filter = filterOf(params);
  const state = params.get('state') === 'discarded' ? 'discarded' : 'open';
  const input = (name: keyof Filter | 'reason', value = '') =>
    h('input', { name, value, autocomplete: 'off' });
  const errorClass = h('select', { name: 'errorClass' });
  for (const c of ['', 'transient', 'permanent'])
    errorClass.append(h('option', { value: c, selected: c === (filter.errorClass ?? '') }, c || 'any'));
  const stateSelect = h('select', { name: 'state' });
  for (const s of ['open', 'discarded'])
    stateSelect.append(h('option', { value: s, selected: s === state }, s));
  const filters = h(
    'form',
    {
      class: 'filters',
      onsubmit: (event: Event) => {
        event.preventDefault();
        const next = new URLSearchParams();
        for (const [k, v] of new FormData(event.target as HTMLFormElement)) if (v) next.set(k, String(v));
        location.hash = `#/dead-letters?${next}`;
      },
    },
    sourceField(picker),
    field('Run id', input('runId', filter.runId)),
    field('Class', errorClass),
    field('Reason contains', input('reasonMatch', filter.reasonMatch)),
    field('State', stateSelect),
    h('button', { type: 'submit' }, 'Filter'),
  );
  const line = status();
  const shown = h('div');
  const entry = h('section', { 'aria-label': 'Entry' });
  root.replaceChildren(h('h1', {}, 'Dead letters'), filters, line, shown, entry);
  if (!sourceId) {
    shown.textContent = 'no sources yet';
    return;
  }
  const query = new URLSearchParams({ limit: '100', state, ...filter });
  const answer = await call<Page<DeadLetter>>('GET', `${path('sources', sourceId, 'dead-letters')}?${query}`);
  if (!answer.ok) {
    line.textContent = problemText(answer);
    return;
  }
  const entries = answer.body.items;
  const table = deadLetterTable(entries, {
    selectable: state === 'open',
    onShow: (id) => void detail(entry, sourceId, id),
  });
  const reason = input('reason');
  reason.required = true;
  const act = async (what: () => Promise<string>) => {
    line.textContent = 'working…';
    const said = await what();
    await deadLettersView(root, params);
    root.querySelector('[role="status"]')!.textContent = said;
  };
  const selected = () =>
    [...table.querySelectorAll<HTMLInputElement>('input[name="entry"]:checked')].map((box) => box.value);
  const hasFilter = Object.keys(filter).length > 0;
  const actions =
    state === 'open' && entries.length > 0
      ? h(
          'form',
          { class: 'actions', onsubmit: (event: Event) => event.preventDefault() },
          h(
            'button',
            {
              type: 'button',
              onclick: () => {
                const boxes = table.querySelectorAll<HTMLInputElement>('input[name="entry"]:not([disabled])');
                const all = [...boxes].every((b) => b.checked);
                for (const b of boxes) b.checked = !all;
              },
            },
            'Select all shown',
          ),
          field('Discard reason', reason),
          h(
            'button',
            {
              type: 'button',
              onclick: () => {
                if (reason.reportValidity() && selected().length > 0)
                  void act(() => discardSelected(sourceId, selected(), reason.value));
                else line.textContent = 'select entries and give a reason';
              },
            },
            'Discard selected',
          ),
          hasFilter
            ? h(
                'button',
                {
                  type: 'button',
                  onclick: () =>
                    reason.reportValidity() &&
                    void act(() => discardMatching(sourceId, filter, reason.value)),
                },
                'Discard all matching the filter',
              )
            : null,
          h(
            'button',
            {
              type: 'button',
              onclick: () =>
                void act(async () => {
                  const body = hasFilter ? { filter } : undefined;
                  const run = await call<{ runId: string }>(
                    'POST',
                    `${path('sources', sourceId, 'dead-letters')}/retry`,
                    body,
                  );
                  return run.ok ? `retry run ${run.body.runId} queued` : `retry refused: ${problemText(run)}`;
                }),
            },
            hasFilter ? 'Retry matching' : 'Retry all failed',
          ),
        )
      : null;
  shown.replaceChildren(
    h(
      'p',
      { class: 'muted' },
      `${entries.length} ${state} shown${answer.body.nextCursor ? ' (more: narrow the filter)' : ''}`,
    ),
    actions ?? '',
    table,
    h(
      'p',
      {},
      link(
        `#/dead-letters?${new URLSearchParams({ source: sourceId, state: state === 'open' ? 'discarded' : 'open' })}`,
        state === 'open' ? 'Show discarded' : 'Show open',
      ),
    ),
  );
}
