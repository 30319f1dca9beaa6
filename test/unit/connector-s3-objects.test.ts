import { describe, expect, it } from 'vitest';
import { hasStablePosition } from '../../lib/connectors/contract.js';
import { InvalidConnectorConfigError, parseConnectorConfig } from '../../lib/connectors/registry.js';
import { s3ObjectsConnector } from '../../lib/connectors/s3-objects/index.js';
import {
  decodeS3Position,
  encodeS3Position,
  listingWatermark,
} from '../../lib/connectors/s3-objects/position.js';
import { ClassifiedError } from '../../lib/retry/errors.js';

describe('s3-objects config', () => {
  it('applies its defaults', () => {
    expect(parseConnectorConfig('s3-objects', { bucket: 'acme-exports' })).toEqual({
      bucket: 'acme-exports',
      prefix: '',
      pageSize: 1_000,
      clockSkewMarginSeconds: 900,
    });
  });

  it.each(['Acme', 'ab', 'a..b', '-acme', 'acme_exports', `a${'b'.repeat(63)}`])(
    'refuses the bucket name %s',
    (bucket) => {
      expect(() => parseConnectorConfig('s3-objects', { bucket })).toThrow(InvalidConnectorConfigError);
    },
  );

  it('refuses page sizes above what S3 lists at once and unknown fields', () => {
    expect(() => parseConnectorConfig('s3-objects', { bucket: 'acme', pageSize: 1_001 })).toThrow(/pageSize/);
    expect(() => parseConnectorConfig('s3-objects', { bucket: 'acme', buckets: 'x' })).toThrow(
      /unknown field/,
    );
  });
});

describe('s3-objects manifest and position', () => {
  it('declares a stable order by key that is not modification time', () => {
    const manifest = s3ObjectsConnector.manifest;
    expect(manifest).toMatchObject({ orderedByModifiedTime: false, orderedByKey: true });
    expect(hasStablePosition(manifest)).toBe(true);
  });

  it('the watermark is the listing start minus the margin, down to the second', () => {
    expect(listingWatermark('2024-05-01T12:00:00.700Z', 0)).toBe('2024-05-01T12:00:00.000Z');
    expect(listingWatermark('2024-05-01T12:00:00.700Z', 900)).toBe('2024-05-01T11:45:00.000Z');
  });

  it('a cursor keeps the listing start across pages and resumes', () => {
    const cursor = encodeS3Position({ after: 'data/0007.json', startedAt: '2024-05-01T12:00:00.000Z' });
    expect(decodeS3Position(cursor, 0)).toEqual({
      after: 'data/0007.json',
      startedAt: '2024-05-01T12:00:00.000Z',
    });
    expect(decodeS3Position(null, Date.parse('2024-06-01T00:00:00Z'))).toEqual({
      after: null,
      startedAt: '2024-06-01T00:00:00.000Z',
    });
  });

  it.each(['ks1.abc', 's3k1.!!!', 's3k1.e30'])('refuses the foreign cursor %s as permanent', (cursor) => {
    expect(() => decodeS3Position(cursor, 0)).toThrow(ClassifiedError);
  });
});

describe('s3-objects normalize', () => {
  const config = s3ObjectsConnector.configSchema.parse({ bucket: 'acme' });
  it('id = key, version = LastModified#ETag (quotes dropped), data = metadata', () => {
    const result = s3ObjectsConnector.normalize(config, {
      key: 'a/b.json',
      etag: '"9b2cf535f27731c974343645a3985328"',
      lastModified: '2024-05-01T12:00:00.000Z',
      size: 12,
    });
    expect(result).toEqual({
      ok: true,
      entity: {
        id: 'a/b.json',
        version: '2024-05-01T12:00:00.000Z',
        data: {
          key: 'a/b.json',
          etag: '9b2cf535f27731c974343645a3985328',
          lastModified: '2024-05-01T12:00:00.000Z',
          size: 12,
          storageClass: 'STANDARD',
        },
      },
    });
  });

  it('a later write orders after an earlier one as a string', () => {
    const v = (time: string, etag: string) => {
      const r = s3ObjectsConnector.normalize(config, { key: 'k', etag, lastModified: time, size: 1 });
      return r.ok ? r.entity.version : '';
    };
    expect(v('2024-05-01T12:00:01.000Z', '"00"') > v('2024-05-01T12:00:00.000Z', '"ff"')).toBe(true);
  });

  it('names the key of a record whose body could not be read', () => {
    expect(
      s3ObjectsConnector.normalize(config, {
        key: 'a/b.json',
        etag: '"e"',
        lastModified: '2024-05-01T12:00:00.000Z',
        size: 1,
        bodyError: 'body is not valid JSON',
      }),
    ).toEqual({ ok: false, reason: 'body is not valid JSON', ref: 'a/b.json' });
  });
});
