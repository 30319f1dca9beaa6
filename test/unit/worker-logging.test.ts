import { afterEach, describe, expect, it, vi } from 'vitest';
import { causeChain, failedRecordLog } from '../../lib/engine/step/page-batch.js';
import { createLogger, keepReservedKeys, workLogger } from '../../lib/observability/logger.js';

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

describe('log fields named like Powertools keys', () => {
  afterEach(() => vi.restoreAllMocks());

  const captured = (log: () => void): Record<string, unknown>[] => {
    const lines: string[] = [];
    // Powertools writes INFO to stdout and WARN/ERROR to stderr.
    for (const stream of [process.stdout, process.stderr]) {
      vi.spyOn(stream, 'write').mockImplementation((chunk: string | Uint8Array) => {
        lines.push(String(chunk));
        return true;
      });
    }
    log();
    vi.restoreAllMocks();
    return lines
      .join('')
      .split('\n')
      .filter((line) => line.trim().startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  };

  it('keeps a `message` attribute as `message_` instead of dropping it, in children too', () => {
    const logger = createLogger('INFO');
    const lines = captured(() => {
      logger.info('scheduled run skipped', { message: { sourceId: 'x' } });
      workLogger(logger, { runId: 'r' }).warn('child line', { message: 'inner', level: 'custom' });
    });
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({ message: 'scheduled run skipped', message_: { sourceId: 'x' } });
    expect(lines[1]).toMatchObject({
      message: 'child line',
      message_: 'inner',
      level_: 'custom',
      runId: 'r',
    });
    // No "reserved key will be dropped" warnings.
    expect(lines.some((line) => String(line.message).includes('reserved'))).toBe(false);
  });

  it('leaves ordinary attributes untouched', () => {
    const attributes = { runId: 'r', page: 1 };
    expect(keepReservedKeys(attributes)).toBe(attributes);
  });
});
