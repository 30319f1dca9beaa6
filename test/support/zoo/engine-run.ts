import type { EngineDeps } from '../../../lib/engine/index.js';
import { startRun } from '../../../lib/engine/index.js';
import type { RunMode, SyncRun } from '../../../lib/run/model.js';
import { type FaultProfile, startFakeSource } from '../../../tools/fake-source/index.js';
import { putSource, waitForRun } from '../harness.js';
import type { ZooSource } from './draw.js';
import {
  configOf,
  connectorOf,
  digitsOf,
  type Expected,
  editBefore,
  editBetween,
  expected,
} from './source.js';

/**
 * A drawn source through the real engine on the emulator: a full run raced by the draw's edits,
 * the edits between runs, one quiet incremental run and one quiet reconciliation, each driven by
 * the file's local runtime; then the store and the dead-letter table against the ground truth.
 */

/**
 * How long one run may take before it counts as one that never ends: 120 s, or
 * `ZOO_RUN_BOUND_S` seconds. The sources are small (an idle machine runs one in a few seconds),
 * but a loaded one was measured at 2 s a page, and a run of 20 pages must not count as stuck.
 */
export const RUN_BOUND_MS = Number(process.env.ZOO_RUN_BOUND_S ?? 120) * 1_000;

async function runWithin(
  deps: EngineDeps,
  sourceId: string,
  mode: RunMode,
  partitions: number,
): Promise<SyncRun | string> {
  const started = await startRun(deps, { sourceId, mode, partitions });
  try {
    return await waitForRun(deps, started.runId, undefined, RUN_BOUND_MS);
  } catch {
    // Stop it, so it does not hold the queue and the source for the next drawn source.
    await deps.lifecycle.cancel(started.runId, deps.clock.now()).catch(() => undefined);
    return `did not end within ${RUN_BOUND_MS / 1_000} s`;
  }
}

/**
 * Runs one drawn source through the engine and returns every invariant it breaks; `profile`: the
 * source's own faults besides its traits (the chaos suite's zoo trials).
 */
export async function engineZooRun(
  deps: EngineDeps,
  s: ZooSource,
  sourceId: string,
  profile: FaultProfile = {},
): Promise<string[]> {
  const fake = await startFakeSource({
    entities: s.entities,
    seed: s.seed,
    latencyMs: 0,
    traits: s.fake,
    profile,
  });
  try {
    await putSource(deps, sourceId, connectorOf(s.shape), configOf(s, fake));
    const violations: string[] = [];
    // Generous but finite: every entity ever listed, several times over, on pages of one.
    const maxPages = 30 + 4 * (s.entities + 40);
    const run = async (label: string, mode: RunMode) => {
      const t0 = Date.now();
      // Only a full run is split: the later ones read from a watermark.
      const ended = await runWithin(deps, sourceId, mode, mode === 'full' ? s.partitions : 1);
      if (process.env.ZOO_VERBOSE === '1')
        console.log(
          `${sourceId} ${label}: ${Date.now() - t0} ms, ${typeof ended === 'string' ? ended : `${ended.progress.pages} pages, ${Object.keys(ended.partitions ?? {}).length} partitions`}`,
        );
      if (typeof ended === 'string') violations.push(`${label} ${ended}`);
      else if (ended.progress.pages > maxPages)
        violations.push(`${label} took ${ended.progress.pages} pages`);
      else if (ended.state !== 'succeeded')
        violations.push(`${label} ended ${ended.state}: ${JSON.stringify(ended.failure)}`);
      return typeof ended !== 'string';
    };
    editBefore(s, fake);
    fake.control.setLive(s.live);
    const fullEnded = await run('full run', 'full');
    fake.control.setLive(null);
    const { oversized } = editBetween(s, fake);
    if (!fullEnded || !(await run('quiet incremental run', 'incremental'))) return violations;
    if (!(await run('quiet reconciliation', 'reconciliation'))) return violations;
    violations.push(...(await storedAgainstTruth(deps, sourceId, expected(s, fake.truth(), oversized))));
    return violations;
  } finally {
    await fake.stop();
  }
}

async function storedAgainstTruth(deps: EngineDeps, sourceId: string, want: Expected): Promise<string[]> {
  const items = new Map((await deps.items.listAll(sourceId)).map((item) => [item.entityId, item]));
  const letters = await deps.deadLetters.listAll(sourceId);
  const live = (id: string) => {
    const item = items.get(id);
    return item !== undefined && item.tombstonedAt === undefined ? item : undefined;
  };
  const lost = [...want.stored.keys()].filter((id) => live(id) === undefined);
  const stale = [...want.stored].filter(([id, v]) => live(id) !== undefined && live(id)!.version !== v);
  const phantoms = [...items.keys()].filter((id) => !want.known.has(id));
  const falseTombstones = [...items.values()]
    .filter((item) => item.tombstonedAt !== undefined)
    .filter((item) => want.stored.has(item.entityId) || want.unstorable.has(item.entityId));
  const notTombstoned = [...want.gone].filter((id) => live(id) !== undefined);
  const itemLetters = new Set(letters.filter((l) => l.kind === 'item').map((l) => l.ref));
  const unfiled = [...want.unstorable].filter((id) => !itemLetters.has(id));
  const pageLetters = letters.filter((l) => l.kind === 'page');
  const rounded = [...want.bigIntegers].filter(
    ([id, d]) => live(id) !== undefined && digitsOf(live(id)!.data.big) !== d,
  );

  const violations: string[] = [];
  const report = (label: string, ids: readonly string[]) => {
    if (ids.length > 0)
      violations.push(`${label} ${ids.length}: ${ids.slice(0, 6).join(', ')}${ids.length > 6 ? ', …' : ''}`);
  };
  report('lost', lost);
  report(
    'stale',
    stale.map(([id, v]) => `${id} (${live(id)!.version} ≠ ${v})`),
  );
  report('stored ids the source never had', phantoms);
  report(
    'live entities tombstoned',
    falseTombstones.map((item) => item.entityId),
  );
  report('deleted or moved entities not tombstoned', notTombstoned);
  report('unstorable records without their own dead letter', unfiled);
  report(
    'whole pages dead-lettered',
    pageLetters.map((l) => `${l.ref.slice(0, 40)} (${l.reason})`),
  );
  report(
    'big integers not exact',
    rounded.map(([id, d]) => `${id} ${digitsOf(live(id)!.data.big)} ≠ ${d}`),
  );
  return violations;
}
