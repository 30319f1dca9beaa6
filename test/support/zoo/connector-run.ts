import type { Connector, ConnectorContext } from '../../../lib/connectors/contract.js';
import { getConnector } from '../../../lib/connectors/registry.js';
import { minusLookback, pageWatermark } from '../../../lib/engine/run/watermark.js';
import { startFakeSource } from '../../../tools/fake-source/index.js';
import type { ZooSource } from './draw.js';
import { configOf, connectorOf, digitsOf, editBefore, editBetween, expected } from './source.js';

/**
 * A drawn source read at the connector level: the real connector over the fake source's HTTP,
 * driven as the engine drives it (cursor in, cursor out, `since` from the watermark the pages
 * justify, moved back by the engine's default lookback), with an in-memory store that keeps the
 * latest version of each id. No emulator, so hundreds of sources fit in a test run; the engine's
 * own path (loads, dead letters, tombstones, messages) is the end-to-end property's part.
 */

/** The engine's default watermark lookback (`WATERMARK_LOOKBACK_SECONDS`). */
const LOOKBACK_MS = 5_000;

interface StreamResult {
  /** Id → latest version delivered, with the record's `big` field where it has one. */
  readonly delivered: Map<string, { version: string; big: unknown }>;
  /** Ids delivered twice at one version by one run: the stream served them twice. */
  readonly duplicates: string[];
  readonly watermark: string | null;
  readonly pages: number;
  /** Why the run could not end: a thrown error, or pages past the bound. */
  readonly failure: string | null;
}

async function readStream(
  connector: Connector<unknown>,
  config: unknown,
  since: string | null,
  maxPages: number,
): Promise<StreamResult> {
  const ctx: ConnectorContext = { fetch: globalThis.fetch, secrets: async () => '', since };
  const delivered = new Map<string, { version: string; big: unknown }>();
  const seen = new Set<string>();
  const duplicates: string[] = [];
  let watermark = since;
  let cursor: string | null = null;
  for (let pages = 1; ; pages++) {
    if (pages > maxPages)
      return { delivered, duplicates, watermark, pages, failure: `no end after ${maxPages} pages` };
    let page: Awaited<ReturnType<Connector<unknown>['fetchPage']>>;
    try {
      page = await connector.fetchPage(config, cursor, ctx);
    } catch (error) {
      const failure = `page ${pages} failed: ${error instanceof Error ? error.message : String(error)}`;
      return { delivered, duplicates, watermark, pages, failure };
    }
    const versions: string[] = [];
    for (const raw of page.items) {
      const normalized = connector.normalize(config, raw);
      if (!normalized.ok) continue;
      const { id, version, data } = normalized.entity;
      const key = `${id}@${version}`;
      if (seen.has(key)) duplicates.push(id);
      seen.add(key);
      const before = delivered.get(id);
      if (before === undefined || before.version <= version) delivered.set(id, { version, big: data.big });
      versions.push(version);
    }
    watermark =
      page.watermark !== undefined
        ? page.watermark
        : pageWatermark(watermark, versions, page.watermarkCeiling);
    if (page.nextCursor === null) return { delivered, duplicates, watermark, pages, failure: null };
    cursor = page.nextCursor;
  }
}

/**
 * Runs one drawn source at the connector level — a full read raced by the draw's edits, the edits
 * between runs, then a quiet incremental read — and returns every invariant it breaks.
 */
export async function connectorZooRun(s: ZooSource): Promise<string[]> {
  const fake = await startFakeSource({ entities: s.entities, seed: s.seed, latencyMs: 0, traits: s.fake });
  try {
    const connector = getConnector(connectorOf(s.shape));
    const config = connector.configSchema.parse(configOf(s, fake));
    // Generous but finite: every entity ever listed, several times over, on pages of one.
    const maxPages = 30 + 4 * (s.entities + 40);
    editBefore(s, fake);
    fake.control.setLive(s.live);
    const full = await readStream(connector, config, null, maxPages);
    fake.control.setLive(null);
    const { oversized } = editBetween(s, fake);
    const since = full.watermark === null ? null : minusLookback(full.watermark, LOOKBACK_MS);
    const quiet = full.failure ? null : await readStream(connector, config, since, maxPages);

    const violations: string[] = [];
    for (const [label, run] of [
      ['full run', full],
      ['quiet incremental run', quiet],
    ] as const) {
      if (run?.failure) violations.push(`${label} did not end: ${run.failure}`);
      if (run && run.duplicates.length > 0) violations.push(`${label} duplicated ${list(run.duplicates)}`);
    }
    if (quiet === null) return violations;
    const store = new Map([...full.delivered]);
    for (const [id, entry] of quiet.delivered) {
      const before = store.get(id);
      if (before === undefined || before.version <= entry.version) store.set(id, entry);
    }
    const want = expected(s, fake.truth(), oversized);
    const lost = [...want.stored.keys()].filter((id) => !store.has(id));
    const stale = [...want.stored]
      .filter(([id, v]) => store.has(id) && store.get(id)!.version !== v)
      .map(([id]) => id);
    const phantoms = [...store.keys()].filter((id) => !want.known.has(id));
    const rounded = [...want.bigIntegers].filter(
      ([id, digits]) => store.has(id) && digitsOf(store.get(id)!.big) !== digits,
    );
    if (lost.length > 0) violations.push(`lost ${list(lost)}`);
    if (stale.length > 0) violations.push(`stale ${list(stale)}`);
    if (phantoms.length > 0) violations.push(`stored ids the source never had: ${list(phantoms)}`);
    if (rounded.length > 0)
      violations.push(
        `big integers not exact: ${rounded.map(([id, d]) => `${id} ${digitsOf(store.get(id)!.big)} ≠ ${d}`).join(', ')}`,
      );
    return violations;
  } finally {
    await fake.stop();
  }
}

function list(ids: readonly string[]): string {
  return `${ids.length}: ${ids.slice(0, 6).join(', ')}${ids.length > 6 ? ', …' : ''}`;
}
