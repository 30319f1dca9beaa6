import { describe, expect, it } from 'vitest';
import { completenessWords, judgeCompleteness } from '../../lib/run/completeness.js';

describe('judging a run’s completeness', () => {
  it('verifies when every counted entity was read and is stored or a dead letter', () => {
    const c = judgeCompleteness({ sourceCount: 100, processed: 97, failed: 3, stored: 97 }, 1);
    expect(c).toMatchObject({ verdict: 'verified', shortBy: 0, reason: null });
    expect(completenessWords(c)).toBe('');
  });

  it('says where the watermark holds when a listing was not proved whole', () => {
    const T = '2024-01-01T00:00:57.000Z';
    const short = judgeCompleteness({ sourceCount: 400, processed: 358, failed: 0, stored: 358, held: T }, 1);
    expect(short).toMatchObject({ verdict: 'short', shortBy: 42, heldAt: T });
    expect(completenessWords(short)).toBe(
      `, short by 42 (the source counts 400 but listed 358; the watermark holds at ${T}, where a listing was not proved whole, so the next incremental reads on from there)`,
    );
    // The count proves the run read everything: the held watermark only costs a re-read.
    const whole = judgeCompleteness({ sourceCount: 400, processed: 400, failed: 0, stored: 400, held: T }, 1);
    expect(whole).toMatchObject({ verdict: 'verified', reason: null, heldAt: T });
    expect(
      judgeCompleteness({ sourceCount: 4, processed: 4, failed: 0, stored: 4 }, 1).heldAt,
    ).toBeUndefined();
  });

  it('counts items the source no longer lists (deleted since) as no shortfall', () => {
    expect(judgeCompleteness({ sourceCount: 100, processed: 100, failed: 0, stored: 120 }, 1).verdict).toBe(
      'verified',
    );
  });

  it('is short by what the source counts and did not list', () => {
    const c = judgeCompleteness({ sourceCount: 101, processed: 100, failed: 0, stored: 100 }, 1);
    expect(c).toMatchObject({ verdict: 'short', shortBy: 1 });
    expect(completenessWords(c)).toBe(', short by 1 (the source counts 101 but listed 100)');
  });

  it('is short by what the run read and the store does not hold', () => {
    expect(judgeCompleteness({ sourceCount: 10, processed: 10, failed: 0, stored: 8 }, 1)).toMatchObject({
      verdict: 'short',
      shortBy: 2,
      reason: 'the source counts 10; the store holds 8 and 0 are dead letters',
    });
    expect(judgeCompleteness({ sourceCount: null, processed: 10, failed: 0, stored: 7 }, 1)).toMatchObject({
      verdict: 'short',
      shortBy: 3,
      reason: 'the run read 10 but the store holds 7',
    });
  });
});
