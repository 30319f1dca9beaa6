import { createHash } from 'node:crypto';

/**
 * Cursor cycles of any length, found with constant state on the chain's checkpoint (Brent's
 * algorithm). A source whose page 3 names page 2 as its next would be read until the run's page
 * budget, and comparing each next cursor with the one just sent only catches a page that names
 * itself. So the checkpoint keeps one marked cursor (a digest, not the cursor: a token may be
 * large or carry a secret) and how many pages were read since it was marked; every `power` pages
 * the mark moves to the newest cursor and `power` doubles. A cycle of length λ entered after μ
 * pages is found by page 2·max(μ + 1, λ) + λ + 1 at the latest; a stream that never repeats a cursor never matches.
 *
 * The cursor compared is the connector's position after the page, before a large one is stored by
 * reference: a keyset position carries its key, the ids read at it and the source's continuation,
 * so it repeats only when the stream would read the same page again with nothing learnt.
 */
export interface CycleWatch {
  /** Digest of the marked cursor. */
  readonly mark: string;
  /** Pages between moves of the mark (a power of two). */
  readonly power: number;
  /** Pages read since the mark was set. */
  readonly steps: number;
}

export function cursorDigest(cursor: string | null): string {
  return cursor === null ? 'start' : createHash('sha256').update(cursor).digest('base64url').slice(0, 16);
}

/** The result of one page's step: the next watch, or the cycle it closed. */
export type CycleStep =
  | { readonly cycle: false; readonly watch: CycleWatch | undefined }
  | { readonly cycle: true };

/**
 * One page of a chain: `sent` is the cursor the page was fetched with, `next` the one after it,
 * `watch` what the chain's checkpoint kept (undefined on the chain's first page or after its
 * stream ended: watching starts again from `sent`). A null `next` ends the stream and the watch.
 */
export function watchCursor(
  watch: CycleWatch | undefined,
  sent: string | null,
  next: string | null,
): CycleStep {
  if (next === null) return { cycle: false, watch: undefined };
  const current = watch ?? { mark: cursorDigest(sent), power: 1, steps: 0 };
  const digest = cursorDigest(next);
  if (digest === current.mark || next === sent) return { cycle: true };
  const steps = current.steps + 1;
  if (steps >= current.power)
    return { cycle: false, watch: { mark: digest, power: current.power * 2, steps: 0 } };
  return { cycle: false, watch: { ...current, steps } };
}

/** The failure reason of a run whose source's cursors lead back to a page already read. */
export const CURSOR_CYCLE = 'cursor_cycle';
