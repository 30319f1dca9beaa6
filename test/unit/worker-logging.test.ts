import { describe, expect, it } from 'vitest';
import { causeChain, failedRecordLog } from '../../lib/engine/step/page-batch.js';

const PAGE = { v: 1, runId: '01JRUN', sourceId: 'acme', epoch: 3, page: 7, cursor: 'c7' };

describe('failedRecordLog', () => {
  it("names the failed record's run, source, epoch and page, and the whole cause", () => {
    const error = new Error('commit refused', { cause: new Error('ConditionalCheckFailed') });
    const attributes = failedRecordLog({ body: JSON.stringify(PAGE), messageId: 'm-1' }, error, 2);
    expect(attributes).toMatchObject({
      runId: '01JRUN',
      sourceId: 'acme',
      epoch: 3,
      page: 7,
      messageId: 'm-1',
      receiveCount: 2,
      errorName: 'Error',
      cause: 'Error: commit refused ← Error: ConditionalCheckFailed',
    });
  });

  it('still carries the cause of a malformed body, without inventing a run', () => {
    const attributes = failedRecordLog({ body: '{not json', messageId: 'm-2' }, new SyntaxError('bad'), 1);
    expect(attributes).not.toHaveProperty('runId');
    expect(attributes.cause).toBe('SyntaxError: bad');
  });

  it('bounds the cause chain', () => {
    let error: Error = new Error('root');
    for (let i = 0; i < 10; i++) error = new Error(`level ${i}`, { cause: error });
    expect(causeChain(error).split(' ← ')).toHaveLength(5);
  });
});
