import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  eventKey,
  type LastEvent,
  MAX_RUN_EVENTS,
  placeEvent,
  RUN_EVENT_DETAILS,
  RUN_EVENT_TYPES,
  type RunEventInput,
  RunEventSchema,
} from '../../lib/run/run-events.js';

const AT = Date.UTC(2026, 11, 7, 12);

function pages(throughPage: number, epoch = 1, partition: number | null = null): RunEventInput {
  return {
    type: 'pages',
    epoch,
    at: AT,
    detail: { partition, throughPage, pages: 10, processed: throughPage * 5 },
  };
}

function ended(epoch = 1): RunEventInput {
  return {
    type: 'ended',
    epoch,
    at: AT,
    detail: { state: 'succeeded', failure: null, processed: 10, deadLetters: 0, total: 10 },
  };
}

function started(epoch = 1): RunEventInput {
  return {
    type: 'started',
    epoch,
    at: AT,
    detail: { mode: 'full', trigger: 'manual', verdict: 'fresh_start' },
  };
}

function resumed(epoch: number): RunEventInput {
  return {
    type: 'resumed',
    epoch,
    at: AT,
    detail: { verdict: 'resumed', from: 'checkpoint', previousEpoch: epoch - 1 },
  };
}

function lastOf(seq: number, event: RunEventInput): LastEvent {
  return { seq, epoch: event.epoch, type: event.type, key: eventKey(event) };
}

/** Folds appends the way the store does: each placed against the story's last kept event. */
function tell(events: readonly RunEventInput[], max = MAX_RUN_EVENTS) {
  let last: LastEvent | undefined;
  const kept: { seq: number; event: RunEventInput }[] = [];
  let dropped = 0;
  for (const event of events) {
    const placed = placeEvent(last, event, max);
    if (placed.kind === 'capped') dropped++;
    if (placed.kind !== 'append') continue;
    kept.push({ seq: placed.seq, event });
    last = lastOf(placed.seq, event);
  }
  return { kept, dropped };
}

describe('placeEvent', () => {
  it('starts a story at 1 and appends after the last event', () => {
    expect(placeEvent(undefined, started())).toEqual({ kind: 'append', seq: 1 });
    expect(placeEvent(lastOf(1, started()), pages(10))).toEqual({ kind: 'append', seq: 2 });
  });

  it('tells a re-sent append of the last event as a duplicate', () => {
    expect(placeEvent(lastOf(2, pages(10)), pages(10))).toEqual({ kind: 'duplicate' });
    expect(placeEvent(lastOf(2, pages(10)), pages(20))).toEqual({ kind: 'append', seq: 3 });
    // The same page at a new epoch is a new event (the page was read again after a fence).
    expect(placeEvent(lastOf(2, pages(10, 1)), pages(10, 2))).toEqual({ kind: 'append', seq: 3 });
    // Another partition's page 10 is another event.
    expect(placeEvent(lastOf(2, pages(10, 1, 0)), pages(10, 1, 1))).toEqual({ kind: 'append', seq: 3 });
  });

  it('refuses a fenced worker’s late append and anything after the end', () => {
    expect(placeEvent(lastOf(3, resumed(2)), pages(30, 1))).toEqual({ kind: 'stale' });
    expect(placeEvent(lastOf(4, ended(2)), pages(30, 2))).toEqual({ kind: 'after_end' });
    expect(placeEvent(lastOf(4, ended(2)), ended(2))).toEqual({ kind: 'duplicate' });
  });

  it('caps the story and keeps the last place for ended', () => {
    expect(placeEvent(lastOf(MAX_RUN_EVENTS - 2, pages(10)), pages(20))).toEqual({
      kind: 'append',
      seq: MAX_RUN_EVENTS - 1,
    });
    expect(placeEvent(lastOf(MAX_RUN_EVENTS - 1, pages(10)), pages(20))).toEqual({ kind: 'capped' });
    expect(placeEvent(lastOf(MAX_RUN_EVENTS - 1, pages(10)), ended())).toEqual({
      kind: 'append',
      seq: MAX_RUN_EVENTS,
    });
  });

  it('keeps every story contiguous, bounded, in epoch order and ended last (property)', () => {
    const input = fc.oneof(
      fc
        .record({ page: fc.integer({ min: 1, max: 40 }), epoch: fc.integer({ min: 1, max: 3 }) })
        .map((p) => pages(p.page, p.epoch)),
      fc.integer({ min: 1, max: 3 }).map((e) => (e === 1 ? started() : resumed(e))),
      fc.integer({ min: 1, max: 3 }).map((e) => ended(e)),
    );
    fc.assert(
      fc.property(fc.array(input, { maxLength: 60 }), fc.integer({ min: 2, max: 12 }), (events, max) => {
        const { kept, dropped } = tell(events, max);
        kept.forEach((k, i) => {
          expect(k.seq).toBe(i + 1);
          if (i > 0) {
            expect(eventKey(k.event)).not.toBe(eventKey(kept[i - 1]!.event));
            expect(k.event.epoch).toBeGreaterThanOrEqual(kept[i - 1]!.event.epoch);
          }
        });
        expect(kept.length).toBeLessThanOrEqual(max);
        expect(kept.filter((k) => k.event.type === 'ended').length).toBeLessThanOrEqual(1);
        const endAt = kept.findIndex((k) => k.event.type === 'ended');
        if (endAt !== -1) expect(endAt).toBe(kept.length - 1);
        // Only events other than `ended` are ever dropped for room, and only once room ran out.
        if (dropped > 0) expect(kept.length).toBeGreaterThanOrEqual(max - 1);
        // Whatever came before, an `ended` of the latest epoch always finds its place.
        const top = Math.max(1, ...kept.map((k) => k.event.epoch));
        if (endAt === -1) {
          const last = kept.at(-1);
          const placed = placeEvent(last && lastOf(last.seq, last.event), ended(top), max);
          expect(placed.kind === 'append' || placed.kind === 'duplicate').toBe(true);
        }
      }),
    );
  });

  it('redelivering any append again changes nothing (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 50 }), { maxLength: 40 }), (pageNumbers) => {
        const once = tell(pageNumbers.map((p) => pages(p)));
        const twice = tell(pageNumbers.flatMap((p) => [pages(p), pages(p)]));
        expect(twice.kept.map((k) => eventKey(k.event))).toEqual(once.kept.map((k) => eventKey(k.event)));
      }),
    );
  });
});

describe('RunEventSchema', () => {
  it('reads each type with its own detail, and refuses a detail of another type', () => {
    expect(RUN_EVENT_TYPES).toEqual(Object.keys(RUN_EVENT_DETAILS));
    const stored = {
      seq: 1,
      at: new Date(AT).toISOString(),
      epoch: 1,
      type: 'started',
      detail: started().detail,
    };
    expect(RunEventSchema.parse(stored)).toEqual(stored);
    expect(RunEventSchema.safeParse({ ...stored, detail: pages(10).detail }).success).toBe(false);
    expect(RunEventSchema.safeParse({ ...stored, seq: MAX_RUN_EVENTS + 1 }).success).toBe(false);
  });
});
