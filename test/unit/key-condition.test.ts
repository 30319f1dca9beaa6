import { describe, expect, it } from 'vitest';
import { keyConditionTest } from '../../lib/aws/key-condition.js';

const query = (KeyConditionExpression: string, values: Record<string, unknown>, names = {}) => ({
  KeyConditionExpression,
  ExpressionAttributeValues: values,
  ExpressionAttributeNames: names,
});
const item = { activeShard: { S: 'active#1' }, heartbeatAt: { N: '500' }, entryId: { S: 'item#e1' } };

describe('keyConditionTest', () => {
  it.each([
    ['activeShard = :a AND heartbeatAt < :t', { ':a': { S: 'active#1' }, ':t': { N: '1000' } }, true],
    ['activeShard = :a AND heartbeatAt < :t', { ':a': { S: 'active#1' }, ':t': { N: '500' } }, false],
    ['activeShard = :a AND heartbeatAt <= :t', { ':a': { S: 'active#1' }, ':t': { N: '500' } }, true],
    ['activeShard = :a AND heartbeatAt >= :t', { ':a': { S: 'active#2' }, ':t': { N: '1' } }, false],
    [
      'activeShard = :a AND heartbeatAt BETWEEN :l AND :h',
      { ':a': { S: 'active#1' }, ':l': { N: '9' }, ':h': { N: '600' } },
      true,
    ],
    [
      'activeShard = :a AND heartbeatAt BETWEEN :l AND :h',
      { ':a': { S: 'active#1' }, ':l': { N: '501' }, ':h': { N: '600' } },
      false,
    ],
    [
      'activeShard = :a AND begins_with(entryId, :p)',
      { ':a': { S: 'active#1' }, ':p': { S: 'item#' } },
      true,
    ],
    [
      'activeShard = :a AND begins_with(entryId, :p)',
      { ':a': { S: 'active#1' }, ':p': { S: 'page#' } },
      false,
    ],
  ])('%s with %j holds: %s', (condition, values, holds) => {
    expect(keyConditionTest(query(condition, values))?.(item)).toBe(holds);
  });

  it('resolves attribute names', () => {
    const test = keyConditionTest(query('#s = :a', { ':a': { S: 'active#1' } }, { '#s': 'activeShard' }));
    expect(test?.(item)).toBe(true);
  });

  it('reads no expression it does not know', () => {
    expect(keyConditionTest(query('size(activeShard) > :n', { ':n': { N: '1' } }))).toBeNull();
    expect(keyConditionTest({})).toBeNull();
  });
});
