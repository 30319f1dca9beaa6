import { startFakeSource } from '../tools/fake-source/index.js';
import { secondsSince } from './setup.js';

/** The source every throughput phase reads: 5,000 entities, 100 per page, 50 ms per page, no faults. */
export const THROUGHPUT_SOURCE = { entities: 5_000, pageSize: 100, latencyMs: 50, seed: 42 } as const;

/** Result of {@link runBareLoop}. */
export interface BareLoopResult {
  readonly bareLoopSeconds: number;
  readonly pages: number;
  readonly entities: number;
}

interface RecordsPage {
  readonly data: unknown[];
  readonly next_cursor: string | null;
}

/**
 * The physical limit of one ordered stream: fetch the same pages as the pipeline, one after the
 * other, following the cursor, with no persistence at all. Anything the pipeline adds on top of
 * this is its overhead.
 */
export async function runBareLoop(): Promise<BareLoopResult> {
  const source = await startFakeSource({ ...THROUGHPUT_SOURCE, profile: 'none' });
  try {
    const started = performance.now();
    let cursor: string | null = null;
    let pages = 0;
    let entities = 0;
    do {
      const url = new URL(`${source.url}/records`);
      url.searchParams.set('limit', String(THROUGHPUT_SOURCE.pageSize));
      if (cursor) url.searchParams.set('cursor', cursor);
      const response = await fetch(url);
      if (!response.ok) throw new Error(`bare loop: ${url} answered ${response.status}`);
      const page = (await response.json()) as RecordsPage;
      pages += 1;
      entities += page.data.length;
      cursor = page.next_cursor;
    } while (cursor);
    const bareLoopSeconds = secondsSince(started);
    if (entities !== THROUGHPUT_SOURCE.entities)
      throw new Error(`bare loop read ${entities} entities, expected ${THROUGHPUT_SOURCE.entities}`);
    return { bareLoopSeconds, pages, entities };
  } finally {
    await source.stop();
  }
}
