import { h, link, when } from './dom.js';

/** A dead letter as the API lists it (the fields the console reads). */
export interface DeadLetter {
  readonly sourceId: string;
  readonly entryId: string;
  readonly kind: string;
  readonly errorClass: string;
  readonly reason: string;
  readonly attempts: number;
  readonly lastFailedAt: string;
  readonly runId: string;
  readonly state: 'open' | 'discarded';
  readonly discard: { at: string; by: string | null; reason: string } | null;
}

/** Options of {@link deadLetterTable}. */
export interface TableOptions {
  /** Checkboxes to select entries, named by entry id. */
  readonly selectable?: boolean;
  /** Called with an entry id when its "Show" button is pressed. */
  readonly onShow?: (entryId: string) => void;
}

/**
 * A table of dead letters: entry, class, reason, attempts, run, last failure; for discarded
 * entries who gave up on them, when and why (`by` is the caller's IAM identity, none locally).
 */
export function deadLetterTable(entries: readonly DeadLetter[], options: TableOptions = {}): HTMLElement {
  if (entries.length === 0) return h('p', { class: 'muted' }, 'no dead letters');
  const discarded = entries.some((e) => e.state === 'discarded');
  const heads = [
    ...(options.selectable ? ['Select'] : []),
    'Entry',
    'Class',
    'Reason',
    'Attempts',
    'Run',
    'Last failed',
    ...(discarded ? ['Discarded', 'By', 'Why'] : []),
  ];
  return h(
    'table',
    { 'aria-label': 'Dead letters' },
    h('thead', {}, h('tr', {}, ...heads.map((label) => h('th', { scope: 'col' }, label)))),
    h(
      'tbody',
      {},
      ...entries.map((e) =>
        h(
          'tr',
          { 'data-entry': e.entryId },
          options.selectable
            ? h(
                'td',
                {},
                h('input', {
                  type: 'checkbox',
                  name: 'entry',
                  value: e.entryId,
                  'aria-label': `select ${e.entryId}`,
                  disabled: e.state !== 'open',
                }),
              )
            : null,
          h(
            'td',
            {},
            options.onShow
              ? h(
                  'button',
                  { type: 'button', class: 'linkish', onclick: () => options.onShow?.(e.entryId) },
                  e.entryId,
                )
              : e.entryId,
          ),
          h('td', {}, e.errorClass),
          h('td', { class: 'reason' }, e.reason),
          h('td', {}, String(e.attempts)),
          h('td', {}, link(`#/run/${encodeURIComponent(e.sourceId)}/${e.runId}`, e.runId)),
          h('td', {}, when(e.lastFailedAt)),
          ...(discarded
            ? [
                h('td', { 'data-field': 'discarded-at' }, when(e.discard?.at)),
                h(
                  'td',
                  { 'data-field': 'discarded-by' },
                  e.discard ? (e.discard.by ?? 'no IAM identity (local)') : '—',
                ),
                h('td', { 'data-field': 'discarded-why' }, e.discard?.reason ?? '—'),
              ]
            : []),
        ),
      ),
    ),
  );
}
