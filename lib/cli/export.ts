import { open, readFile, rename, stat, truncate, writeFile } from 'node:fs/promises';
import { SingleBar } from 'cli-progress';
import type { z } from 'zod';
import type { ItemPageSchema } from '../api/schemas/items.js';
import { stringifyJson } from '../json/lossless.js';
import type { ApiClient } from './client.js';
import { CliUsageError } from './context.js';
import type { Io } from './output.js';

type ItemPage = z.infer<typeof ItemPageSchema>;

/**
 * `harvester items export`: a source's items as JSON Lines, streamed page by page (one page in
 * memory at a time), resumable. Beside the output a small state file records, after each page,
 * the cursor of the next page and the output's length once the page was written. A resumed
 * export first cuts the output back to that length — dropping a page written after the last
 * recorded state, by a run that was killed in between — then continues from the cursor, so no
 * line is written twice and none is skipped.
 */

/** What to export and where. */
export interface ExportOptions {
  readonly sourceId: string;
  readonly output: string;
  readonly resume: boolean;
  /** Overwrite an existing output file (without it, an export never replaces a file it did not write). */
  readonly force?: boolean;
  readonly changedSince?: string | undefined;
  readonly includeTombstoned?: boolean | undefined;
  /** Entities per request (1–100). */
  readonly pageSize: number;
  /** Called after a page's lines are written, before its state is recorded (tests simulate a crash here). */
  readonly afterWrite?: (page: number) => void | Promise<void>;
}

/** What an export (or its resumed part) wrote. */
export interface ExportResult {
  readonly lines: number;
  readonly pages: number;
  /** Lines written by earlier, interrupted attempts and kept. */
  readonly resumedFrom: number;
}

interface ExportState {
  readonly v: 1;
  readonly sourceId: string;
  readonly changedSince: string | null;
  readonly includeTombstoned: boolean | null;
  readonly cursor: string | null;
  readonly bytes: number;
  readonly lines: number;
  readonly pages: number;
  readonly done: boolean;
}

/** The state file of an export to `output`. */
export function exportStatePath(output: string): string {
  return `${output}.export-state.json`;
}

async function readState(output: string): Promise<ExportState | undefined> {
  try {
    return JSON.parse(await readFile(exportStatePath(output), 'utf8')) as ExportState;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new CliUsageError(
      `cannot read the export state ${exportStatePath(output)}: ${(error as Error).message}`,
    );
  }
}

/** Written beside, then renamed over: a crash leaves the old state or the new, never half of one. */
async function saveState(output: string, state: ExportState): Promise<void> {
  const path = exportStatePath(output);
  await writeFile(`${path}.tmp`, JSON.stringify(state));
  await rename(`${path}.tmp`, path);
}

/** Where an export starts: from scratch, or where the recorded state says, the output cut back to match. */
async function startingState(options: ExportOptions): Promise<ExportState> {
  const fresh: ExportState = {
    v: 1,
    sourceId: options.sourceId,
    changedSince: options.changedSince ?? null,
    includeTombstoned: options.includeTombstoned ?? null,
    cursor: null,
    bytes: 0,
    lines: 0,
    pages: 0,
    done: false,
  };
  if (!options.resume) {
    const existing = await stat(options.output).catch(() => undefined);
    if (existing && !options.force)
      throw new CliUsageError(
        `${options.output} exists; pass --force to overwrite it, or --resume to continue an interrupted export into it`,
      );
    return fresh;
  }
  const state = await readState(options.output);
  if (!state) throw new CliUsageError(`nothing to resume: ${exportStatePath(options.output)} does not exist`);
  if (
    state.sourceId !== fresh.sourceId ||
    state.changedSince !== fresh.changedSince ||
    state.includeTombstoned !== fresh.includeTombstoned
  )
    throw new CliUsageError(
      `${options.output} is an export of another listing (source ${state.sourceId}); resume it with the same source and options`,
    );
  const size = (await stat(options.output).catch(() => undefined))?.size ?? 0;
  if (size < state.bytes)
    throw new CliUsageError(
      `${options.output} is shorter than its export state records; start the export again`,
    );
  await truncate(options.output, state.bytes);
  return state;
}

/** Exports page by page; see the module comment. */
export async function exportItems(client: ApiClient, options: ExportOptions, io: Io): Promise<ExportResult> {
  let state = await startingState(options);
  const resumedFrom = state.lines;
  if (state.done) return { lines: 0, pages: 0, resumedFrom };
  const file = await open(options.output, options.resume ? 'a' : 'w');
  const bar = (io.err as { isTTY?: boolean }).isTTY ? progressBar(io) : undefined;
  bar?.start(0, state.lines, { pages: state.pages });
  let pages = 0;
  try {
    do {
      const page = await client.get<ItemPage>(`/sources/${encodeURIComponent(options.sourceId)}/items`, {
        limit: options.pageSize,
        cursor: state.cursor ?? undefined,
        changedSince: options.changedSince,
        includeTombstoned:
          options.includeTombstoned === undefined ? undefined : String(options.includeTombstoned),
      });
      const text = page.items.map((item) => `${stringifyJson(item)}\n`).join('');
      await file.write(text);
      pages += 1;
      await options.afterWrite?.(pages);
      state = {
        ...state,
        cursor: page.nextCursor,
        bytes: state.bytes + Buffer.byteLength(text),
        lines: state.lines + page.items.length,
        pages: state.pages + 1,
        done: page.nextCursor === null,
      };
      await saveState(options.output, state);
      bar?.update(state.lines, { pages: state.pages });
    } while (!state.done);
  } finally {
    bar?.stop();
    await file.close();
  }
  return { lines: state.lines - resumedFrom, pages, resumedFrom };
}

function progressBar(io: Io): SingleBar {
  // The total is unknown (the API does not count a listing): the bar shows what was written.
  return new SingleBar({
    format: 'exporting · {value} entities · {pages} pages',
    stream: io.err,
    hideCursor: true,
  });
}
