import { describe, expect, it } from 'vitest';
import { streamsEndpoint } from '../../lib/local/dynamodb-streams.js';
import { ShardBook } from '../../lib/local/stream-shards.js';

const ids = (book: ShardBook) => book.readable().map((s) => s.shardId);

describe('the change feed shard book', () => {
  it('reads the shards of the first listing from LATEST, and shards listed later from TRIM_HORIZON', () => {
    const book = new ShardBook();

    book.discover([{ shardId: 'a' }], 'LATEST');
    const added = book.discover([{ shardId: 'a' }, { shardId: 'b' }], 'TRIM_HORIZON');

    expect(added).toEqual(['b']);
    expect(book.readable().map((s) => [s.shardId, s.position.type])).toEqual([
      ['a', 'LATEST'],
      ['b', 'TRIM_HORIZON'],
    ]);
  });

  it('reads a child only once its parent is closed, and never reads a closed shard again', () => {
    const book = new ShardBook();
    book.discover([{ shardId: 'parent' }], 'LATEST');
    book.discover([{ shardId: 'parent' }, { shardId: 'child', parentShardId: 'parent' }], 'TRIM_HORIZON');
    expect(ids(book)).toEqual(['parent']);

    book.advance('parent', null, '10');
    // A stream lists a closed shard for 24 h: listing it again must not start it over.
    const added = book.discover(
      [{ shardId: 'parent' }, { shardId: 'child', parentShardId: 'parent' }],
      'TRIM_HORIZON',
    );

    expect(added).toEqual([]);
    expect(book.isClosed('parent')).toBe(true);
    expect(ids(book)).toEqual(['child']);
  });

  it('reads a child whose parent it never knew (trimmed away before the feed started)', () => {
    const book = new ShardBook();

    book.discover([{ shardId: 'child', parentShardId: 'gone' }], 'LATEST');

    expect(ids(book)).toEqual(['child']);
  });

  it('keeps the next iterator after a read, and after an expiry resumes after the last record delivered', () => {
    const book = new ShardBook();
    book.discover([{ shardId: 'a' }], 'LATEST');
    book.issued('a', 'it-1');
    book.advance('a', 'it-2', '41');
    expect(book.readable()[0]).toMatchObject({ iterator: 'it-2' });
    book.advance('a', 'it-3');

    book.lost('a', 'expired');

    expect(book.readable()[0]).toEqual({
      shardId: 'a',
      iterator: undefined,
      position: { type: 'AFTER_SEQUENCE_NUMBER', sequenceNumber: '41' },
    });
  });

  it.each([
    ['LATEST', 'expired', 'LATEST'],
    ['TRIM_HORIZON', 'expired', 'TRIM_HORIZON'],
    ['LATEST', 'trimmed', 'TRIM_HORIZON'],
  ] as const)('a shard started at %s that delivered nothing resumes, once %s, at %s', (start, why, type) => {
    const book = new ShardBook();
    book.discover([{ shardId: 'a' }], start);
    book.issued('a', 'it-1');

    book.lost('a', why);

    expect(book.readable()[0]).toEqual({ shardId: 'a', iterator: undefined, position: { type } });
  });

  it('after trimmed data, starts again at the oldest record left even past delivered records', () => {
    const book = new ShardBook();
    book.discover([{ shardId: 'a' }], 'LATEST');
    book.advance('a', 'it-2', '41');

    book.lost('a', 'trimmed');

    expect(book.readable()[0]?.position).toEqual({ type: 'TRIM_HORIZON' });
  });
});

describe('the change feed Streams endpoint', () => {
  it.each([
    [{ streams: 'http://streams:1', dynamodb: 'http://ddb:2' }, 'http://streams:1'],
    [{ streams: '', dynamodb: 'http://ddb:2' }, 'http://ddb:2'],
    [{ dynamodb: 'http://ddb:2' }, 'http://ddb:2'],
    [{}, undefined],
  ])('%o → %s', (choice, endpoint) => {
    expect(streamsEndpoint(choice)).toBe(endpoint);
  });
});
