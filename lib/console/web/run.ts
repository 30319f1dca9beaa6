import { call, type Page, type Partition, path, problemText, progressText, type Run } from './api.js';
import { type DeadLetter, deadLetterTable } from './dead-letter-table.js';
import { age, h, link, redraw, status, when } from './dom.js';

/**
 * One run: its fixed outcome once it ended, its live state while it runs (polled), its
 * partitions, its events as a timeline, and the dead letters still open as its own.
 */

const POLL_MS = 2_000;

/** A run event as `GET /sources/{id}/runs/{runId}/events` lists it (the fields shown). */
interface RunEvent {
  readonly seq: number;
  readonly at: string;
  readonly type: string;
  readonly epoch: number;
  readonly detail: unknown;
}

/** A run's whole story (at most 500 events: five pages), or the answer that stopped its reading. */
type Story =
  | { readonly ok: true; readonly events: RunEvent[]; readonly dropped: number }
  | { readonly ok: false; readonly answer: { status: number; ok: boolean; body: unknown } };

async function readStory(runPath: string): Promise<Story> {
  const events: RunEvent[] = [];
  let cursor: string | null = null;
  let dropped = 0;
  do {
    const query: string = cursor ? `?limit=100&cursor=${encodeURIComponent(cursor)}` : '?limit=100';
    const answer = await call<Page<RunEvent> & { dropped: number }>('GET', `${runPath}/events${query}`);
    if (!answer.ok) return { ok: false, answer };
    events.push(...answer.body.items);
    dropped = answer.body.dropped;
    cursor = answer.body.nextCursor;
  } while (cursor);
  return { ok: true, events, dropped };
}

function facts(entries: [string, Node | string][]): HTMLDListElement {
  return h(
    'dl',
    { class: 'facts' },
    ...entries.flatMap(([term, value]) => [h('dt', {}, term), h('dd', {}, value)]),
  );
}

function outcomeBlock(run: Run): HTMLElement {
  if (!run.outcome) return h('p', { 'data-field': 'outcome' }, 'no outcome yet: the run has not ended');
  const o = run.outcome;
  return h(
    'section',
    { 'aria-label': 'Outcome', 'data-field': 'outcome' },
    h(
      'h2',
      {},
      o.fixed ? 'Outcome (fixed when it ended)' : 'Outcome (counted now: ended before outcomes were kept)',
    ),
    facts([
      ['Processed', h('span', { 'data-field': 'outcome-processed' }, String(o.processed))],
      ['Failed', String(o.failed)],
      ['Dead letters filed', h('span', { 'data-field': 'outcome-filed' }, String(o.deadLettersFiled))],
      ['Source total', o.sourceTotal === null ? 'not stated' : String(o.sourceTotal)],
    ]),
  );
}

function partitionTable(partitions: readonly Partition[]): HTMLElement {
  const cols = ['index', 'state', 'processed', 'pages', 'errorCount'] as const;
  return h(
    'table',
    { 'aria-label': 'Partitions' },
    h('thead', {}, h('tr', {}, ...cols.map((c) => h('th', { scope: 'col' }, c)))),
    h(
      'tbody',
      {},
      ...partitions.map((p) => h('tr', {}, ...cols.map((c) => h('td', {}, String(p[c] ?? '—'))))),
    ),
  );
}

/** `mode=full · verdict=fresh_start`: an event's detail in one line. */
function detailText(detail: unknown): string {
  if (detail === null || typeof detail !== 'object') return detail === undefined ? '' : String(detail);
  return Object.entries(detail as Record<string, unknown>)
    .filter(([, v]) => v !== null)
    .map(([k, v]) => `${k}=${typeof v === 'object' ? JSON.stringify(v) : String(v)}`)
    .join(' · ');
}

/** The run's events, oldest first; "no events recorded" for a run that kept none. */
function timeline(story: Story): HTMLElement {
  if (!story.ok)
    return h('p', { 'data-field': 'events' }, `events unavailable: ${problemText(story.answer)}`);
  if (story.events.length === 0)
    return h('p', { class: 'muted', 'data-field': 'events' }, 'no events recorded');
  return h(
    'div',
    { 'data-field': 'events' },
    h(
      'ol',
      { class: 'timeline' },
      ...story.events.map((e) =>
        h(
          'li',
          { 'data-event': e.type },
          when(e.at),
          ' ',
          h('strong', {}, e.type),
          h('span', { class: 'muted' }, ` epoch ${String(e.epoch)}`),
          ' ',
          detailText(e.detail),
        ),
      ),
    ),
    story.dropped > 0
      ? h('p', { class: 'muted' }, `${story.dropped} more events found no room (a run keeps 500)`)
      : '',
  );
}

/** Renders the run `runId` of `sourceId`; returns the function that stops its polling. */
export function runView(root: HTMLElement, sourceId: string, runId: string): () => void {
  const line = status();
  const live = h('div', { 'aria-live': 'off' });
  const events = h('section', { 'aria-label': 'Events' });
  const letters = h('section', { 'aria-label': 'Dead letters of this run' });
  root.replaceChildren(
    h('p', {}, link('#/runs', '← Runs')),
    h('h1', {}, `Run ${runId}`),
    line,
    live,
    h('h2', {}, 'Timeline'),
    events,
    h('h2', {}, 'Open dead letters of this run'),
    letters,
  );
  const runPath = path('sources', sourceId, 'runs', runId);
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;
  const refresh = async (): Promise<void> => {
    const [run, evs, dls] = await Promise.all([
      call<Run>('GET', runPath),
      readStory(runPath),
      call<Page<DeadLetter>>('GET', `${path('sources', sourceId, 'dead-letters')}?runId=${runId}&limit=50`),
    ]);
    if (stopped) return;
    if (!run.ok) {
      line.textContent = problemText(run);
      return;
    }
    const r = run.body;
    const active = r.state === 'queued' || r.state === 'running';
    redraw(
      live,
      facts([
        ['Source', link(`#/dead-letters?source=${encodeURIComponent(sourceId)}&runId=${runId}`, sourceId)],
        ['Mode', r.mode],
        ['State', h('span', { 'data-field': 'state', class: `state state-${r.state}` }, r.state)],
        ['Processed', h('span', { 'data-field': 'progress' }, progressText(r))],
        ['Open dead letters', h('span', { 'data-field': 'deadLetters' }, String(r.openDeadLetters))],
        ['Heartbeat', age(r.heartbeatAgeSeconds)],
        ['Verdict', r.verdict],
        ['Started', when(r.startedAt)],
        ['Finished', when(r.finishedAt)],
        ['Summary', r.summary],
      ]),
      active
        ? h(
            'button',
            {
              type: 'button',
              'data-key': 'cancel',
              onclick: async () => {
                const answer = await call('POST', `${runPath}/cancel`);
                line.textContent = answer.ok ? 'cancelling' : problemText(answer);
              },
            },
            'Cancel run',
          )
        : '',
      outcomeBlock(r),
      r.partitions ? h('h2', {}, 'Partitions') : '',
      r.partitions ? partitionTable(r.partitions) : '',
    );
    redraw(events, timeline(evs));
    redraw(letters, dls.ok ? deadLetterTable(dls.body.items) : problemText(dls));
    if (active) timer = setTimeout(() => void refresh(), POLL_MS);
  };
  void refresh();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
