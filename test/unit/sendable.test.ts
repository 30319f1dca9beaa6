import { describe, expect, it } from 'vitest';
import type { PageMessage } from '../../lib/queue/page-message.js';
import { refusesTheMessage, sendableBody, UnsendableMessageError } from '../../lib/queue/sendable.js';

const message: PageMessage = { v: 1, runId: 'r1', sourceId: 's1', epoch: 1, page: 2, cursor: 'c' };

function named(name: string, text = 'refused'): Error {
  const error = new Error(text);
  error.name = name;
  return error;
}

describe('sendableBody', () => {
  it('is the JSON of a message the worker can read', () => {
    expect(JSON.parse(sendableBody(message))).toEqual(message);
  });

  it('refuses a message the worker would refuse, naming the field', () => {
    const long = { ...message, cursor: 'x'.repeat(8_193) };
    expect(() => sendableBody(long)).toThrow(UnsendableMessageError);
    expect(() => sendableBody(long)).toThrow(/cursor/);
  });

  it('refuses characters SQS refuses', () => {
    expect(() => sendableBody({ ...message, cursor: 'a\uFFFFb' })).toThrow(/U\+FFFE or U\+FFFF/);
  });
});

describe('refusesTheMessage', () => {
  it.each([
    [named('InvalidMessageContents'), true],
    [named('AWS.SimpleQueueService.InvalidMessageContents'), true],
    [named('InvalidParameterValue', 'Message must be shorter than 262144 bytes.'), true],
    [named('InvalidParameterValue', 'DelaySeconds is invalid'), false],
    [named('ServiceUnavailable'), false],
    [named('ThrottlingException'), false],
    ['not an error', false],
  ])('%s → %s', (error, refuses) => {
    expect(refusesTheMessage(error)).toBe(refuses);
  });
});
