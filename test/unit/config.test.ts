import { describe, expect, it } from 'vitest';
import {
  PAGE_QUEUE_VISIBILITY_SECONDS,
  RELIABILITY,
  RETRY_CONCURRENCY,
  STEP_OVERHEAD_MS,
  WORKER_TIMEOUT_SECONDS,
  WORST_RETRY_STRETCH_MS,
} from '../../lib/config/constants.js';
import { ConfigError, loadConfig } from '../../lib/config/env.js';
import { DEFAULT_REQUEST_TIMEOUT_MS } from '../../lib/connectors/http.js';
import { DEAD_LETTER_RETRY_PAGE_SIZE } from '../../lib/engine/work/dead-letter-retry.js';
import { CONFIRMATIONS_PER_SLICE } from '../../lib/engine/work/tombstone-pass.js';
import { canonicalJson, stableHash } from '../../lib/run/hash.js';

describe('loadConfig', () => {
  it('derives resource names from the prefix', () => {
    const config = loadConfig({ HARVESTER_PREFIX: 'demo' });
    expect(config.names.syncRunsTable).toBe('demo-syncruns');
    expect(config.names.pageDlq).toBe('demo-pages-dlq');
    expect(config.region).toBe('us-east-1');
  });

  it('defaults the prefix to harvester', () => {
    expect(loadConfig({}).names.itemsTable).toBe('harvester-items');
  });

  it('prefers explicit table names set by the stack', () => {
    expect(loadConfig({ SYNC_RUNS_TABLE: 'Stack-Runs-123' }).names.syncRunsTable).toBe('Stack-Runs-123');
  });

  it('fails with a message naming every bad variable', () => {
    expect(() => loadConfig({ HARVESTER_PREFIX: 'Bad Prefix!', AWS_ENDPOINT_URL: 'not a url' })).toThrow(
      ConfigError,
    );
    try {
      loadConfig({ HARVESTER_PREFIX: 'Bad Prefix!', AWS_ENDPOINT_URL: 'not a url' });
    } catch (error) {
      expect((error as Error).message).toContain('HARVESTER_PREFIX');
      expect((error as Error).message).toContain('AWS_ENDPOINT_URL');
    }
  });
});

describe('derived timing', () => {
  it('gives the worker the true worst case of a page: 5 attempts at the 30 s request timeout, 4 backoffs at the 60 s cap, load and commit', () => {
    expect(RELIABILITY.requestTimeoutMs).toBe(DEFAULT_REQUEST_TIMEOUT_MS);
    expect(WORKER_TIMEOUT_SECONDS * 1_000).toBeGreaterThanOrEqual(5 * 30_000 + 4 * 60_000 + 120_000);
  });

  it('sizes a retry-failed page so its waves of re-fetches fit one invocation at their worst', () => {
    const waves = Math.ceil(DEAD_LETTER_RETRY_PAGE_SIZE / RETRY_CONCURRENCY);
    expect(waves * WORST_RETRY_STRETCH_MS + STEP_OVERHEAD_MS).toBeLessThanOrEqual(
      WORKER_TIMEOUT_SECONDS * 1_000,
    );
    expect(DEAD_LETTER_RETRY_PAGE_SIZE).toBeGreaterThanOrEqual(RETRY_CONCURRENCY);
  });

  it('sizes a tombstone slice so its waves of absence confirmations fit one invocation at their worst', () => {
    const waves = Math.ceil(CONFIRMATIONS_PER_SLICE / RETRY_CONCURRENCY);
    expect(waves * WORST_RETRY_STRETCH_MS + STEP_OVERHEAD_MS).toBeLessThanOrEqual(
      WORKER_TIMEOUT_SECONDS * 1_000,
    );
    expect(CONFIRMATIONS_PER_SLICE).toBeGreaterThanOrEqual(RETRY_CONCURRENCY);
  });

  it('gives the worker more time than its worst retry stretch', () => {
    expect(WORKER_TIMEOUT_SECONDS * 1_000).toBeGreaterThan(WORST_RETRY_STRETCH_MS);
    expect(WORKER_TIMEOUT_SECONDS).toBeLessThanOrEqual(900);
  });

  it('keeps the visibility timeout at six times the function timeout', () => {
    expect(PAGE_QUEUE_VISIBILITY_SECONDS).toBeGreaterThanOrEqual(6 * WORKER_TIMEOUT_SECONDS);
    expect(PAGE_QUEUE_VISIBILITY_SECONDS).toBeLessThanOrEqual(43_200);
  });

  it('keeps the backoff cap below the silence threshold', () => {
    expect(RELIABILITY.backoffCapMs).toBeLessThan(RELIABILITY.silenceThresholdMs);
    expect(RELIABILITY.heartbeatIntervalMs * 3).toBeLessThanOrEqual(RELIABILITY.silenceThresholdMs);
  });
});

describe('stableHash', () => {
  it('ignores key order', () => {
    expect(stableHash({ a: 1, b: { c: 2, d: 3 } })).toBe(stableHash({ b: { d: 3, c: 2 }, a: 1 }));
  });

  it('changes with any value', () => {
    expect(stableHash({ a: 1 })).not.toBe(stableHash({ a: 2 }));
    expect(canonicalJson([1, { b: 2, a: 1 }])).toBe('[1,{"a":1,"b":2}]');
  });
});
