import { describe, expect, it } from 'vitest';
import { completenessWords, judgeCompleteness } from '../../lib/run/completeness.js';

describe('judging a run’s completeness', () => {
  it('verifies when every counted entity was read and is stored or a dead letter', () => {
    const c = judgeCompleteness({ sourceCount: 100, processed: 97, failed: 3, stored: 97 }, 1);
    expect(c).toMatchObject({ verdict: 'verified', shortBy: 0, reason: null });
    expect(completenessWords(c)).toBe('');
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
