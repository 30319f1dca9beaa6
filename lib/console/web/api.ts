/**
 * The console's one way to the admin API: same-origin requests under `/api/`, which the server
 * that served the page answers (the dev server itself, or `harvester console`, which signs and
 * forwards them). The page holds no credential and talks to no other host.
 */

/** An API answer: its status and parsed body (a problem+json on errors). */
export interface Answer<T> {
  readonly status: number;
  readonly ok: boolean;
  readonly body: T;
}

/** Calls the API; never throws on an HTTP error status, only on a network failure. */
export async function call<T = Record<string, unknown>>(
  method: string,
  path: string,
  body?: unknown,
): Promise<Answer<T>> {
  const response = await fetch(`/api${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  let parsed: unknown = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = { detail: text };
  }
  return { status: response.status, ok: response.ok, body: parsed as T };
}

/** What an error answer says, for a status line. */
export function problemText(answer: Answer<unknown>): string {
  const body = (answer.body ?? {}) as { detail?: string; title?: string; message?: string };
  return `${answer.status}: ${body.detail ?? body.message ?? body.title ?? 'request failed'}`;
}

/** `/sources/a%2Fb/…`: path segments encoded. */
export function path(...segments: string[]): string {
  return segments.map((s) => `/${encodeURIComponent(s)}`).join('');
}

/** A source, as `GET /sources` lists it (the fields the console reads). */
export interface Source {
  readonly sourceId: string;
  readonly connector: string;
  readonly paused: boolean;
}

/** A run view (the fields the console reads). */
export interface Run {
  readonly runId: string;
  readonly sourceId: string;
  readonly mode: string;
  readonly state: string;
  readonly progress: { processed: number; total: number | null; totalIsEstimate: boolean; pages: number };
  readonly openDeadLetters: number;
  readonly errorCount: number;
  readonly outcome: {
    processed: number;
    failed: number;
    deadLettersFiled: number;
    sourceTotal: number | null;
    fixed: boolean;
  } | null;
  readonly summary: string;
  readonly verdict: string;
  readonly heartbeatAgeSeconds: number | null;
  readonly startedAt?: string | null;
  readonly finishedAt?: string | null;
  readonly partitions?: readonly Partition[];
}

/** A partition of a run. */
export interface Partition {
  readonly index: number;
  readonly state: string;
  readonly processed?: number;
  readonly [field: string]: unknown;
}

/** A page of a listing. */
export interface Page<T> {
  readonly items: T[];
  readonly nextCursor: string | null;
}

/** The run modes a source can be started in. */
export const MODES = ['full', 'incremental', 'reconciliation', 'dlq_retry'] as const;

/** `processed of ~total` as a run view gives it. */
export function progressText(run: Run): string {
  const { processed, total, totalIsEstimate } = run.progress;
  return total === null ? `${processed}` : `${processed} of ${totalIsEstimate ? '~' : ''}${total}`;
}
