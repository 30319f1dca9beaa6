import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../../lib/cli/main.js';
import { captureIo } from '../support/cli-io.js';
import { type FakeApi, type SeenRequest, startFakeApi } from '../support/fake-api.js';

/**
 * `dlq discard` by filter against a stand-in API: it counts (dry runs, following the cursor),
 * says how many and asks, then discards call by call and adds up what the calls did; and
 * `dlq list --state discarded` shows who, when and why.
 */

let api: FakeApi;
/** How many entries the fake says match, spread over calls of at most `perCall`. */
let matching = 0;
let skippedPerCall = 0;
const perCall = 100;

const BULK = '/sources/acme/dead-letters/discard';
const DISCARDED_ENTRY = {
  sourceId: 'acme',
  entryId: 'item#e-7',
  kind: 'item',
  ref: 'e-7',
  errorClass: 'permanent',
  reason: 'invalid record: missing id',
  attempts: 2,
  firstFailedAt: '2026-12-01T10:00:00.000Z',
  lastFailedAt: '2026-12-01T11:00:00.000Z',
  runId: '01J9ZQ4T7J8Y2K3M4N5P6Q7R8S',
  page: 3,
  excerpt: null,
  state: 'discarded',
  discard: {
    at: '2026-12-02T09:30:00.000Z',
    by: 'arn:aws:sts::123456789012:assumed-role/Ops/alice',
    reason: 'deleted upstream',
  },
};

/** Called with each bulk request before it is answered (to change what matches in between). */
let onRequest: (request: SeenRequest) => void = () => {};

/** The bulk route: each call takes up to `perCall` of what is left from its cursor (`n<offset>`). */
function bulk(request: SeenRequest) {
  onRequest(request);
  const body = JSON.parse(request.body) as { dryRun: boolean; cursor?: string };
  const offset = body.cursor ? Number(body.cursor.slice(1)) : 0;
  const taken = Math.min(perCall, matching - offset);
  const skipped = body.dryRun ? 0 : Math.min(skippedPerCall, taken);
  return {
    status: 200,
    body: {
      dryRun: body.dryRun,
      matched: taken,
      discarded: body.dryRun ? 0 : taken - skipped,
      skipped,
      nextCursor: offset + taken < matching ? `n${offset + taken}` : null,
    },
  };
}

beforeAll(async () => {
  api = await startFakeApi({
    [`POST ${BULK}`]: bulk,
    'POST /sources/acme/dead-letters/item%23e-7/discard': { status: 200, body: DISCARDED_ENTRY },
    'GET /sources/acme/dead-letters': { status: 200, body: { items: [DISCARDED_ENTRY], nextCursor: null } },
    'POST /sources/acme/dead-letters/retry': {
      status: 202,
      body: { runId: '01J9ZQ4T7J8Y2K3M4N5P6Q7R8T', sourceId: 'acme', mode: 'dlq_retry' },
    },
  });
});
afterAll(() => api.close());
beforeEach(() => {
  api.seen.length = 0;
  matching = 0;
  skippedPerCall = 0;
  onRequest = () => {};
});

async function run(io: ReturnType<typeof captureIo>, ...args: string[]): Promise<number> {
  return runCli(['node', 'harvester', '--endpoint', api.url, 'dlq', ...args], io);
}

function bulkCalls(): { dryRun: boolean; cursor?: string; filter: unknown; reason: string }[] {
  return api.seen.filter((r) => r.path === BULK).map((r) => JSON.parse(r.body));
}

describe('dlq discard by filter', () => {
  it('counts over every page first, says how many, asks, then discards following the cursor', async () => {
    matching = 230;
    skippedPerCall = 1;
    const io = captureIo({ isTTY: true, answer: 'y' });

    const code = await run(io, 'discard', 'acme', '--error-class', 'permanent', '--reason', 'bad upstream');

    expect(code).toBe(0);
    const calls = bulkCalls();
    expect(calls.map((c) => [c.dryRun, c.cursor])).toEqual([
      [true, undefined],
      [true, 'n100'],
      [true, 'n200'],
      [false, undefined],
      [false, 'n100'],
      [false, 'n200'],
    ]);
    for (const c of calls)
      expect(c).toMatchObject({ filter: { errorClass: 'permanent' }, reason: 'bad upstream' });
    expect(io.stdout()).toContain('230 open dead letters of acme match --error-class permanent');
    expect(io.stderr()).toContain(
      'discard 230 dead letters of acme (--error-class permanent) as "bad upstream"? [y/N]',
    );
    expect(io.stdout()).toContain('discarded 227 dead letters of acme: bad upstream');
    expect(io.stdout()).toContain(
      'skipped 3: discarded, resolved or failed again differently since they were counted',
    );
    expect(io.stdout()).toContain('dlq list acme --state discarded');
  });

  it('counts as skipped the entries counted that the discard no longer found (resolved in between)', async () => {
    matching = 12;
    const io = captureIo();
    const resolveTwo = (request: SeenRequest) => {
      if (!JSON.parse(request.body).dryRun) matching = 10;
    };
    api.seen.length = 0;
    onRequest = resolveTwo;

    expect(await run(io, 'discard', 'acme', '--all', '--reason', 'x', '--yes', '--json')).toBe(0);

    expect(JSON.parse(io.stdout())).toMatchObject({ counted: 12, discarded: 10, skipped: 2 });
  });

  it('"n" at the question discards nothing', async () => {
    matching = 5;
    const io = captureIo({ isTTY: true, answer: 'n' });

    expect(await run(io, 'discard', 'acme', '--all', '--reason', 'x')).toBe(0);

    expect(bulkCalls().map((c) => c.dryRun)).toEqual([true]);
    expect(bulkCalls()[0]!.filter).toEqual({ all: true });
    expect(io.stdout()).toContain('kept the dead letters of acme: nothing discarded');
  });

  it('without a terminal it needs --yes; with it, nothing is asked', async () => {
    matching = 3;
    const refused = captureIo();
    expect(
      await run(refused, 'discard', 'acme', '--run', '01J9ZQ4T7J8Y2K3M4N5P6Q7R8S', '--reason', 'x'),
    ).toBe(2);
    expect(refused.stderr()).toContain('refused without a terminal to ask; pass --yes');
    expect(bulkCalls().every((c) => c.dryRun)).toBe(true);

    const io = captureIo();
    expect(await run(io, 'discard', 'acme', '--reason-match', "it's 404", '--reason', 'gone', '--yes')).toBe(
      0,
    );
    expect(io.stderr()).toBe('');
    expect(bulkCalls().at(-1)).toMatchObject({ dryRun: false, filter: { reasonMatch: "it's 404" } });
    expect(io.stdout()).toContain(`3 open dead letters of acme match --reason-match 'it'\\''s 404'`);
    expect(io.stdout()).toContain('discarded 3 dead letters of acme: gone');
  });

  it('when nothing matches, says so and asks nothing', async () => {
    const io = captureIo({ isTTY: true, answer: 'y' });
    expect(await run(io, 'discard', 'acme', '--error-class', 'transient', '--reason', 'x')).toBe(0);
    expect(bulkCalls().map((c) => c.dryRun)).toEqual([true]);
    expect(io.stdout()).toContain(
      'no open dead letters of acme match --error-class transient: nothing to discard',
    );
    expect(io.stderr()).toBe('');
  });

  it('--json prints the counted, discarded and skipped totals', async () => {
    matching = 120;
    const io = captureIo();
    expect(await run(io, 'discard', 'acme', '--all', '--reason', 'x', '--yes', '--json')).toBe(0);
    expect(JSON.parse(io.stdout())).toEqual({
      sourceId: 'acme',
      filter: { all: true },
      counted: 120,
      discarded: 120,
      skipped: 0,
    });
  });

  it('refuses an entry with a filter, --all with a filter, and neither, before any request', async () => {
    for (const args of [['item#e-1', '--all'], ['--all', '--error-class', 'permanent'], []]) {
      const io = captureIo();
      expect(await run(io, 'discard', 'acme', ...args, '--reason', 'x'), args.join(' ')).toBe(2);
      expect(io.stderr()).toMatch(
        /not both|give it alone|or a filter: --run, --error-class, --reason-match or --all/,
      );
    }
    expect(api.seen).toEqual([]);
  });

  it('the single-entry form still discards that one entry, without asking', async () => {
    const io = captureIo();
    expect(await run(io, 'discard', 'acme', 'e-7', '--reason', 'deleted upstream')).toBe(0);
    expect(api.seen.map((r) => r.path)).toEqual(['/sources/acme/dead-letters/item%23e-7/discard']);
    expect(io.stdout()).toContain('discarded item#e-7 of acme: deleted upstream');
  });
});

describe('dlq list --state discarded', () => {
  it('shows who discarded each entry, when and why', async () => {
    const io = captureIo();
    expect(await run(io, 'list', 'acme', '--state', 'discarded', '--reason-match', 'missing id')).toBe(0);
    expect(api.seen[0]!.path).toContain('reasonMatch=missing+id');
    expect(api.seen[0]!.path).toContain('state=discarded');
    const [header, row] = io.stdout().split('\n');
    expect(header).toMatch(/^ENTRY\s+CLASS\s+DISCARDED\s+BY\s+WHY$/);
    expect(row).toMatch(
      /^item#e-7\s+permanent\s+2026-12-02T09:30:00.000Z\s+arn:aws:sts::123456789012:assumed-role\/Ops\/alice\s+deleted upstream$/,
    );
  });
});

describe('dlq retry by filter', () => {
  it('sends the filter the flags name, and says the run retries only those', async () => {
    const io = captureIo();
    expect(await run(io, 'retry', 'acme', '--error-class', 'transient', '--reason-match', 'HTTP 5')).toBe(0);
    expect(JSON.parse(api.seen[0]!.body)).toEqual({
      filter: { errorClass: 'transient', reasonMatch: 'HTTP 5' },
    });
    expect(io.stdout()).toContain(
      "retrying only the open dead letters of acme matching --error-class transient --reason-match 'HTTP 5'",
    );
    expect(io.stdout()).toContain('started run 01J9ZQ4T7J8Y2K3M4N5P6Q7R8T (dlq_retry) of acme');
  });

  it('without a filter retries every open entry, sending no body', async () => {
    const io = captureIo();
    expect(await run(io, 'retry', 'acme')).toBe(0);
    expect(api.seen[0]!.body).toBe('');
    expect(io.stdout()).not.toContain('retrying only');
  });
});
