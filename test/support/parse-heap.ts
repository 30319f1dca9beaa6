/**
 * Run as `node --expose-gc --import tsx test/support/parse-heap.ts <shape> <MiB>` by
 * test/unit/parse-budget.test.ts: answers one page of `<MiB>` MiB through `fetchJson`, the path
 * every HTTP connector's answer takes, and prints as JSON whether it was refused and how much the
 * heap grew meanwhile (measured with the collector run before and after, so only what the page
 * kept alive counts, and once before the collector, which counts the garbage too).
 */
import { fetchJson } from '../../lib/connectors/http.js';

const [shape = 'empty-arrays', mib = '16'] = process.argv.slice(2);
const bytes = Number(mib) * 1_024 * 1_024;
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with --expose-gc');

/** A body of about `bytes`: `[[],[],…]`, or records of a few fields with a long text each. */
function body(): Buffer {
  if (shape === 'empty-arrays') return Buffer.from(`[${'[],'.repeat(Math.floor(bytes / 3) - 1)}[]]`);
  const record = (i: number) =>
    JSON.stringify({ id: i, title: `issue ${i}`, user: { login: `u${i}` }, body: 'x'.repeat(60_000) });
  const records: string[] = [];
  let size = 2;
  for (let i = 0; size < bytes - 70_000; i++) {
    const text = record(i);
    records.push(text);
    size += text.length + 1;
  }
  return Buffer.from(`[${records.join(',')}]`);
}

const payload = body();
const fetchFn = (async () =>
  new Response(payload, { headers: { 'content-type': 'application/json' } })) as unknown as typeof fetch;
gc();
const before = process.memoryUsage().heapUsed;
let kept: unknown;
let refused: string | null = null;
try {
  kept = await fetchJson(fetchFn, 'https://source.example/items', { maxBodyBytes: 33 * 1_024 * 1_024 });
} catch (error) {
  refused = error instanceof Error ? error.message : String(error);
}
const withGarbage = process.memoryUsage().heapUsed - before;
gc();
const retained = process.memoryUsage().heapUsed - before;
process.stdout.write(
  JSON.stringify({ bodyBytes: payload.length, refused, retained, withGarbage, kept: kept !== undefined }),
);
