import type { LocalStack } from '../../lib/local/local-stack.js';
import type { GroundTruth, LiveLog } from '../fake-source/index.js';

/** One verified claim of the demo. */
export interface Check {
  readonly name: string;
  readonly ok: boolean;
  readonly detail?: string;
}

interface FinishedRun {
  readonly runId: string;
  readonly state: string;
  readonly progress: { processed: number; total: number | null };
  readonly errorCount: number;
  readonly resume: { reason: string };
  readonly epoch: number;
}

/**
 * Compares what Harvester stored with the fake source's ground truth and prints the summary:
 * N/M processed, K in dead letters with reasons, pages fetched twice, entities lost and
 * duplicated, stale versions. Every number is computed from the tables, not taken from the run.
 */
export async function verifyAgainstTruth(
  stack: LocalStack,
  sourceId: string,
  run: FinishedRun,
  truth: GroundTruth,
  /** Pages the source served again, and the chains the reaper's fence moved to a new epoch. */
  refetches: { readonly duplicates: number; readonly mostServes: number; readonly chainsRearmed: number },
  say: (line?: string) => void,
  /** The id Harvester stores for a truth entity (`github-issues` stores the issue number). */
  idOf: (entity: GroundTruth['entities'][number]) => string = (entity) => entity.id,
  /** Edits made while the run read the source: an issue edited after it was read is read again. */
  edits: LiveLog = { touched: [], added: [], deleted: [] },
): Promise<Check[]> {
  const deadLetters = await stack.deps.deadLetters.listAll(sourceId);
  const invalidTruthIds = new Set(truth.invalidIds);
  const invalid = new Set(truth.entities.filter((e) => invalidTruthIds.has(e.id)).map(idOf));
  const expected = truth.entities.filter((e) => !invalidTruthIds.has(e.id));
  // Every id the source holds is looked up (BatchGetItem): lost = not stored, stale = stored with
  // another version; and since processed counts every load, processed > stored means duplicates.
  const items = await stack.deps.items.getVersions(sourceId, truth.entities.map(idOf));
  const stored = new Map(items.map((i) => [i.entityId, i]));
  const lost = expected.filter((e) => !stored.has(idOf(e))).length;
  const unexpected = items.filter((i) => invalid.has(i.entityId)).length;
  const stale = expected.filter((e) => {
    const item = stored.get(idOf(e));
    return item !== undefined && Date.parse(item.version) !== Date.parse(e.updatedAt);
  }).length;
  // An entity edited after the run read it is read once more, at its new version: a re-read, not
  // a duplicate. At most one per edit.
  const reReads = edits.touched.length;
  const duplicated = Math.max(0, run.progress.processed - (items.length - unexpected) - reReads);
  const edited = new Map(edits.touched.map((e) => [e.id, e.updatedAt]));
  const editedLatest = truth.entities.filter((e) => edited.has(e.id) && !invalidTruthIds.has(e.id));
  const editedStale = editedLatest.filter((e) => {
    const item = stored.get(idOf(e));
    return item === undefined || Date.parse(item.version) !== Date.parse(e.updatedAt);
  }).length;

  say();
  say('Summary');
  say(
    `  ${run.progress.processed}/${run.progress.total ?? '?'} processed, ${run.errorCount} in dead letters (run ${run.state}, verdict ${run.resume.reason}, epoch ${run.epoch})`,
  );
  for (const entry of deadLetters.slice(0, 20)) say(`    ${entry.kind} ${entry.ref}: ${entry.reason}`);
  say(
    `  pages fetched twice: ${refetches.duplicates} (chains re-armed by the reaper: ${refetches.chainsRearmed})`,
  );
  say(
    `  entities lost: ${lost}, duplicated: ${duplicated}, older version stored: ${stale}  (verified against the source's ground truth of ${truth.entities.length})`,
  );
  if (edits.touched.length + edits.added.length > 0) {
    say(
      `  edited during the run: ${edits.touched.length} (stored at their latest version: ${editedLatest.length - editedStale} of ${editedLatest.length}), opened during the run: ${edits.added.length}`,
    );
  }

  const deadRefs = deadLetters.map((d) => d.ref).sort();
  return [
    { name: 'run succeeded', ok: run.state === 'succeeded' },
    {
      name: 'the reaper resumed the killed run',
      ok: run.resume.reason === 'resumed' && run.epoch > 1,
      detail: `verdict ${run.resume.reason}`,
    },
    {
      name: 'N + K = M (plus one re-read per issue edited after it was read)',
      ok:
        run.progress.processed + run.errorCount >= truth.entities.length &&
        run.progress.processed + run.errorCount <= truth.entities.length + reReads,
      detail: `${run.progress.processed} + ${run.errorCount} vs ${truth.entities.length}, ${reReads} edits`,
    },
    {
      name: 'every issue edited during the run stored at its latest version',
      ok: editedStale === 0,
      detail: String(editedStale),
    },
    {
      name: 'dead letters are exactly the invalid records',
      ok: JSON.stringify(deadRefs) === JSON.stringify([...invalid].sort()),
    },
    { name: '0 entities lost', ok: lost === 0, detail: String(lost) },
    { name: '0 entities duplicated', ok: duplicated === 0 && unexpected === 0, detail: String(duplicated) },
    { name: 'no older version stored', ok: stale === 0 },
    {
      // The killed worker's page is read again, and so is a live chain's page in flight when the
      // fence moved it to the new epoch. The demo's one worker holds one page at a time: one page
      // lost at the kill, at most one refused at the fence — and never more than one per chain.
      name: 'pages fetched twice: the killed one, at most one more in flight at the fence, none three times',
      ok:
        refetches.duplicates <= Math.min(2, Math.max(1, refetches.chainsRearmed)) &&
        refetches.mostServes <= 2,
      detail: `${refetches.duplicates} for ${refetches.chainsRearmed} chain(s), most serves of one page ${refetches.mostServes}`,
    },
  ];
}
