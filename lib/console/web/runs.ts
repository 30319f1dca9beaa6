import { call, MODES, type Page, path, problemText, progressText, type Run, type Source } from './api.js';
import { age, field, h, link, redraw, status } from './dom.js';

/**
 * Runs: every source with its running and last runs, polled every two seconds — how far (N of
 * ~M), dead letters still open as the run's, heartbeat age, the resume verdict, partitions —
 * with a start button per source and a cancel button per active run.
 */

const POLL_MS = 2_000;

/** One run's row cells, each marked with `data-field` for whoever reads the page by program. */
export function runCells(run: Run): HTMLTableCellElement[] {
  const cell = (name: string, ...content: (Node | string)[]) => h('td', { 'data-field': name }, ...content);
  const done = run.partitions?.filter((p) => p.state === 'succeeded').length ?? 0;
  return [
    cell('run', link(`#/run/${encodeURIComponent(run.sourceId)}/${run.runId}`, run.runId)),
    cell('mode', run.mode),
    cell('state', h('span', { class: `state state-${run.state}` }, run.state)),
    cell('progress', progressText(run)),
    cell('deadLetters', String(run.openDeadLetters)),
    cell('heartbeat', age(run.heartbeatAgeSeconds)),
    cell('verdict', run.verdict),
    cell('partitions', run.partitions ? `${done} of ${run.partitions.length} done` : '—'),
  ];
}

const ACTIVE = new Set(['queued', 'running']);

async function cancel(run: Run, line: HTMLElement): Promise<void> {
  const answer = await call('POST', `${path('sources', run.sourceId, 'runs', run.runId)}/cancel`);
  line.textContent = answer.ok ? `cancelling ${run.runId}` : `cancel refused: ${problemText(answer)}`;
}

function startForm(source: Source, line: HTMLElement, refresh: () => void): HTMLFormElement {
  const mode = h('select', { name: 'mode', 'data-key': `mode-${source.sourceId}` });
  for (const m of MODES) mode.append(h('option', { value: m }, m));
  return h(
    'form',
    {
      class: 'inline',
      onsubmit: async (event: Event) => {
        event.preventDefault();
        const answer = await call<Run>('POST', path('sources', source.sourceId, 'runs'), {
          mode: mode.value,
        });
        line.textContent = answer.ok
          ? `started ${answer.body.runId} (${mode.value}) on ${source.sourceId}`
          : `start refused: ${problemText(answer)}`;
        refresh();
      },
    },
    field(`Mode for ${source.sourceId}`, mode),
    h('button', { type: 'submit', 'data-key': `start-${source.sourceId}` }, 'Start'),
  );
}

function sourceRows(source: Source, runs: Run[], line: HTMLElement, refresh: () => void): HTMLElement[] {
  const active = runs.filter((r) => ACTIVE.has(r.state));
  const last = runs.find((r) => !ACTIVE.has(r.state));
  const shown = [...active, ...(last ? [last] : [])];
  const head = h(
    'tr',
    { class: 'source' },
    h(
      'th',
      { scope: 'rowgroup', colspan: 9 },
      h('span', { class: 'source-id' }, source.sourceId),
      ` ${source.connector}${source.paused ? ' · paused' : ''} `,
      startForm(source, line, refresh),
    ),
  );
  const rows = shown.map((run) =>
    h(
      'tr',
      { 'data-run': run.runId, 'data-source': source.sourceId },
      ...runCells(run),
      h(
        'td',
        {},
        ACTIVE.has(run.state)
          ? h(
              'button',
              {
                type: 'button',
                'data-key': `cancel-${run.runId}`,
                onclick: () => cancel(run, line).then(refresh),
              },
              'Cancel',
            )
          : '',
      ),
    ),
  );
  if (rows.length === 0) rows.push(h('tr', {}, h('td', { colspan: 9 }, 'no runs yet')));
  return [h('tbody', {}, head, ...rows)];
}

/** Renders the runs view into `root`; returns the function that stops its polling. */
export function runsView(root: HTMLElement): () => void {
  const line = status();
  const table = h('table', { 'aria-label': 'Runs by source' });
  const updated = h('p', { class: 'muted' });
  root.replaceChildren(h('h1', {}, 'Runs'), line, updated, table);
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;
  const head = h(
    'thead',
    {},
    h(
      'tr',
      {},
      ...['Run', 'Mode', 'State', 'Processed', 'Dead letters', 'Heartbeat', 'Verdict', 'Partitions', ''].map(
        (label) => h('th', { scope: 'col' }, label),
      ),
    ),
  );
  const refresh = async (): Promise<void> => {
    clearTimeout(timer);
    const sources = await call<Page<Source>>('GET', '/sources');
    if (stopped) return;
    if (!sources.ok) {
      line.textContent = problemText(sources);
    } else {
      const groups = await Promise.all(
        sources.body.items.map(async (source) => {
          const runs = await call<Page<Run>>('GET', `${path('sources', source.sourceId, 'runs')}?limit=5`);
          return sourceRows(source, runs.ok ? runs.body.items : [], line, () => void refresh());
        }),
      );
      if (stopped) return;
      redraw(table, head, ...groups.flat());
      if (sources.body.items.length === 0) redraw(table, h('caption', {}, 'no sources yet'));
      updated.textContent = `updated ${new Date().toLocaleTimeString()}, every ${POLL_MS / 1000} s`;
    }
    timer = setTimeout(() => void refresh(), POLL_MS);
  };
  void refresh();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
