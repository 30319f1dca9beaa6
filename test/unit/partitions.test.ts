import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { toRunView } from '../../lib/api/views.js';
import { RELIABILITY } from '../../lib/config/constants.js';
import { dropReason } from '../../lib/engine/step/message-check.js';
import type { PageMessage } from '../../lib/queue/page-message.js';
import type { Partition, SyncRun } from '../../lib/run/model.js';
import {
  advanceLatest,
  heldWatermark,
  MAX_PARTITIONS_LIMIT,
  newPartitions,
  notReadYet,
  partitionBound,
  partitionedWatermark,
  windowsOf,
} from '../../lib/run/partitions.js';
import { decideResume } from '../../lib/run/resume-policy.js';
import { judgeSilence, lastProgressAt } from '../../lib/run/silence.js';

const T = 1_700_000_000_000;
const iso = (s: number) => new Date(Date.UTC(2026, 0, 1) + s * 1_000).toISOString();

function partition(overrides: Partial<Partition> = {}): Partition {
  return { ...newPartitions([{ from: null, until: null }], T)['0']!, ...overrides };
}

describe('partitionBound', () => {
  it.each([
    [undefined, 8, 8],
    [3, 8, 3],
    [1, 8, 1],
    [0, 8, 1],
    [500, 8, MAX_PARTITIONS_LIMIT],
    [undefined, 1, 1],
  ])('asked %s with a stack default of %i: %i windows at most', (requested, stack, expected) => {
    expect(partitionBound(requested, stack)).toBe(expected);
  });

  it.each([
    [undefined, 8, 3, 3],
    [6, 8, 4, 4],
    [2, 8, 10, 2],
    [undefined, 8, Number.POSITIVE_INFINITY, 8],
  ])(
    'asked %s with a stack default of %i and %s requests in flight per credential: %i windows at most',
    (requested, stack, cap, expected) => {
      expect(partitionBound(requested, stack, cap)).toBe(expected);
    },
  );
});

describe('windowsOf', () => {
  it('makes contiguous windows from since to an open end', () => {
    expect(windowsOf(iso(0), [iso(10), iso(20)], 8)).toEqual([
      { from: iso(0), until: iso(10) },
      { from: iso(10), until: iso(20) },
      { from: iso(20), until: null },
    ]);
  });

  it('drops boundaries that are not strictly ascending or not after since, and keeps at most k windows', () => {
    expect(windowsOf(iso(5), [iso(5), iso(3), iso(10), iso(10), iso(20), iso(30)], 3)).toEqual([
      { from: iso(5), until: iso(10) },
      { from: iso(10), until: iso(20) },
      { from: iso(20), until: null },
    ]);
  });

  it('no boundary: one window, the whole stream', () => {
    expect(windowsOf(null, [], 8)).toEqual([{ from: null, until: null }]);
  });

  it('windows always cover the stream without overlap (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 100 })), fc.integer({ min: 1, max: 10 }), (cuts, k) => {
        const windows = windowsOf(null, cuts.map(iso), k);
        expect(windows.length).toBeLessThanOrEqual(k);
        expect(windows[0]!.from).toBeNull();
        expect(windows.at(-1)!.until).toBeNull();
        for (let i = 1; i < windows.length; i++) {
          expect(windows[i]!.from).toBe(windows[i - 1]!.until);
          expect(windows[i]!.from! > (windows[i - 1]!.from ?? '')).toBe(true);
        }
      }),
    );
  });
});

describe('partitionedWatermark', () => {
  const at = (watermark: string | null, ceiling: string | null = null) =>
    partition({ checkpoint: watermark ? { cursor: null, page: 1, watermark, at: T } : null, ceiling });

  it('is the latest version any window read', () => {
    expect(partitionedWatermark([at(iso(10)), at(iso(30)), at(iso(20))], null)).toBe(iso(30));
  });

  it('never passes the lowest ceiling any window met (a tie read by position)', () => {
    expect(partitionedWatermark([at(iso(10), iso(8)), at(iso(30))], null)).toBe(iso(8));
  });

  it('never goes below where the run started, and is null when nothing was read from nothing', () => {
    expect(partitionedWatermark([at(iso(10), iso(2))], iso(5))).toBe(iso(5));
    expect(partitionedWatermark([at(null), at(null)], null)).toBeNull();
  });

  it('is held, and says where, only when a ceiling is below the latest version read', () => {
    expect(heldWatermark([at(iso(10), iso(8)), at(iso(30))])).toBe(iso(8));
    expect(heldWatermark([at(iso(10)), at(iso(30), iso(40))])).toBeNull();
    expect(heldWatermark([at(iso(10)), at(iso(30))])).toBeNull();
  });
});

describe('advanceLatest and notReadYet', () => {
  it('keeps the latest version read and the ids read at it', () => {
    const first = advanceLatest(partition(), [
      { id: 'a', version: iso(1) },
      { id: 'b', version: iso(2) },
      { id: 'c', version: iso(2) },
    ]);
    expect(first).toEqual({ latest: iso(2), latestIds: ['b', 'c'] });
    expect(advanceLatest(first, [{ id: 'd', version: iso(3) }])).toEqual({
      latest: iso(3),
      latestIds: ['d'],
    });
    expect(advanceLatest(first, [])).toEqual(first);
  });

  it('a tail pass leaves out exactly the entities already read at the latest version', () => {
    const read = partition({ latest: iso(2), latestIds: ['b'] });
    const listed = [
      { id: 'b', version: iso(2) },
      { id: 'c', version: iso(2) },
      { id: 'a', version: iso(3) },
    ];
    expect(notReadYet(read, listed).map((e) => e.id)).toEqual(['c', 'a']);
    expect(notReadYet(partition(), listed)).toHaveLength(3);
  });

  it('keeps long ids as short digests in the run item, and still leaves out exactly those read', () => {
    const long = (n: number) => `https://api.example.com/repos/acme/widgets/issues/${n}-${'x'.repeat(200)}`;
    const read = advanceLatest(
      partition(),
      Array.from({ length: 100 }, (_, n) => ({ id: long(n), version: iso(2) })),
    );
    expect(read.latestIds.every((id) => id.length <= 13)).toBe(true);
    const listed = [
      { id: long(5), version: iso(2) },
      { id: long(500), version: iso(2) },
    ];
    expect(notReadYet({ ...partition(), ...read }, listed).map((e) => e.id)).toEqual([long(500)]);
  });
});

describe('silence per partition', () => {
  it.each<[string, Partial<Partition>, string]>([
    ['a partition whose worker beat recently is alive', { heartbeatAt: T + 60_000 }, 'alive'],
    [
      'a partition whose page waits on the queue is waiting',
      { handoff: { page: 1, at: T, sentAt: T } },
      'waiting',
    ],
    [
      'a partition whose send was never confirmed is re-sent',
      { handoff: { page: 1, at: T, sentAt: null } },
      'resend',
    ],
    ['a partition whose worker took the page and went silent is lost', { handoff: null }, 'lost'],
  ])('%s', (_name, overrides, kind) => {
    const silence = judgeSilence(partition(overrides), T + RELIABILITY.silenceThresholdMs + 1_000);
    expect(silence.kind).toBe(kind);
  });

  it('a partitioned run progresses when any partition commits', () => {
    const run = {
      checkpoint: null,
      startedAt: T,
      createdAt: T,
      resume: { reason: 'fresh_start' as const, from: 'scratch' as const, at: T },
      nextPage: 2,
      partitions: {
        '0': partition({ checkpoint: { cursor: 'c', page: 3, watermark: null, at: T + 5_000 } }),
        '1': partition({ checkpoint: { cursor: 'c', page: 1, watermark: null, at: T + 9_000 } }),
      },
    };
    expect(lastProgressAt(run)).toBe(T + 9_000);
  });
});

describe('decideResume for a partitioned run', () => {
  /** A planned run, no partition committed yet: its plan is its position. */
  const planned = (mode: SyncRun['mode'], restarts = 0) => ({
    mode,
    state: 'running' as const,
    restarts,
    paramsHash: 'h',
    nextPage: 2,
    checkpoint: null,
    startedAt: T,
    createdAt: T,
    resume: { reason: 'fresh_start' as const, from: 'scratch' as const, at: T },
    partitions: { '0': partition(), '1': partition() },
  });
  const input = {
    run: planned('full'),
    orderedByModifiedTime: true,
    currentParamsHash: 'h',
    now: T + 60_000,
  };

  it.each(['full', 'incremental'] as const)('resumes every partition where it stood (%s)', (mode) => {
    expect(decideResume({ ...input, run: planned(mode) })).toEqual({ action: 'resume', verdict: 'resumed' });
  });

  it.each([
    ['a crash loop fails', { run: planned('full', RELIABILITY.maxRestartsPerRun) }, 'restart_limit'],
    ['a reconfigured source restarts and plans again', { currentParamsHash: 'other' }, 'params_changed'],
    ['a stale position restarts', { now: T + RELIABILITY.checkpointFreshnessMs + 1 }, 'checkpoint_stale'],
  ])('%s', (_name, overrides, verdict) => {
    expect(decideResume({ ...input, ...overrides }).verdict).toBe(verdict);
  });
});

describe('dropReason for a partition page', () => {
  const run = {
    runId: 'r',
    sourceId: 's',
    state: 'running',
    epoch: 2,
    nextPage: 2,
    partitions: {
      '0': partition({ nextPage: 4 }),
      '1': partition({ index: 1, nextPage: 7, state: 'done' }),
    },
  } as unknown as SyncRun;
  const message = (partitionIndex: number, page: number, epoch = 2): PageMessage => ({
    v: 1,
    runId: 'r',
    sourceId: 's',
    epoch,
    page,
    cursor: 'c',
    partition: partitionIndex,
  });

  it.each<[string, PageMessage, string | undefined]>([
    ['the partition’s expected page is work', message(0, 4), undefined],
    ['an earlier page of the partition is a duplicate', message(0, 3), 'duplicate_page'],
    ['a later page of the partition is out of order', message(0, 5), 'page_out_of_order'],
    ['any page of a done partition is a duplicate', message(1, 7), 'duplicate_page'],
    ['a page of an older epoch is stale', message(0, 4, 1), 'stale_epoch'],
    ['a partition the run does not have is unknown', message(5, 1), 'partition_unknown'],
  ])('%s', (_name, m, reason) => {
    expect(dropReason(run, m)).toBe(reason);
  });
});

describe('the run view of a partitioned run', () => {
  it('shows the latest beat of any partition as the run’s sign of life, and lists the partitions', () => {
    const run = {
      runId: 'r',
      sourceId: 's',
      mode: 'full',
      trigger: 'api',
      params: {},
      paramsHash: 'h',
      state: 'running',
      epoch: 1,
      nextPage: 2,
      checkpoint: null,
      progress: { processed: 30, total: 100, pages: 3 },
      errorCount: 0,
      heartbeatAt: T,
      deferredUntil: null,
      handoff: null,
      outboxAt: null,
      restarts: 0,
      resume: { reason: 'fresh_start', from: 'scratch', at: T },
      failure: null,
      createdAt: T,
      startedAt: T,
      finishedAt: null,
      updatedAt: T,
      partitions: {
        '0': partition({ heartbeatAt: T + 50_000, processed: 20, pages: 2 }),
        '1': partition({ index: 1, heartbeatAt: T + 20_000, processed: 10, pages: 1, state: 'done' }),
      },
      openPartitions: 1,
    } as SyncRun;

    const view = toRunView(run, T + 60_000);

    expect(view.heartbeatAgeSeconds).toBe(10);
    expect(view.partitions?.map((p) => [p.index, p.state, p.processed])).toEqual([
      [0, 'running', 20],
      [1, 'done', 10],
    ]);
    // A done partition has no heartbeat of its own to show.
    expect(view.partitions?.[1]?.heartbeatAt).toBeNull();
  });
});
