import { describe, expect, it } from 'vitest';
import { mergeResults } from '../../bench/merge.js';

const goal = (name: string, measured: string) => ({ goal: name, target: 't', measured, met: true });
const PARTITIONED_GOAL = 'partitioned run (k = 8) / bare sequential loop';

describe('bench results merge', () => {
  const previous = {
    generatedAt: 'old',
    environment: { only: null },
    bareLoopSeconds: 3,
    partitionedSpeedup: null,
    partitioned: null,
    goals: [goal('overhead ratio on moto', '34×'), goal(PARTITIONED_GOAL, 'unavailable')],
    errors: { partitioned: 'failed before' },
  };
  const fresh = {
    generatedAt: 'new',
    environment: { only: ['partitioned'] },
    bareLoopSeconds: null,
    partitionedSpeedup: 0.2,
    partitioned: { partitions: 8 },
    goals: [goal('overhead ratio on moto', 'n/a'), goal(PARTITIONED_GOAL, '0.2×')],
    errors: {},
  };

  it('takes the re-measured phase’s fields and goal from the fresh run and keeps every other number', () => {
    const merged = mergeResults(previous, fresh, ['partitioned']);
    expect(merged.bareLoopSeconds).toBe(3);
    expect(merged.generatedAt).toBe('old');
    expect(merged.partitionedSpeedup).toBe(0.2);
    expect(merged.partitioned).toEqual({ partitions: 8 });
    expect(merged.goals.map((g) => g.measured)).toEqual(['34×', '0.2×']);
    expect(merged.errors).toEqual({});
    expect(merged.phaseRuns).toEqual({
      partitioned: { measuredAt: 'new', environment: { only: ['partitioned'] } },
    });
  });

  it('refuses a phase whose fields it does not know', () => {
    expect(() => mergeResults(previous, fresh, ['pipeline'])).toThrow(/cannot be merged/);
  });
});
