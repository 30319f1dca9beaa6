import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_PAGE_LIMIT } from '../../lib/api/schemas/common.js';
import { CONNECTOR_CHOICES, closest, MAX_LIST_LIMIT } from '../../lib/cli/choices.js';
import { runCli } from '../../lib/cli/main.js';
import { CONNECTOR_NAMES } from '../../lib/connectors/registry.js';
import { captureIo } from '../support/cli-io.js';
import { type FakeApi, startFakeApi } from '../support/fake-api.js';

let api: FakeApi;
beforeAll(async () => {
  api = await startFakeApi({});
});
afterAll(() => api.close());

async function harvester(...args: string[]) {
  const io = captureIo();
  const before = api.seen.length;
  const code = await runCli(['node', 'harvester', '--endpoint', api.url, ...args], io);
  return { code, stderr: io.stderr(), requests: api.seen.length - before };
}

describe('option values checked before any request', () => {
  it.each([
    [
      ['runs', 'start', 'acme', '--mode', 'ful'],
      '--mode "ful" is not one of full, incremental, reconciliation, dlq_retry; did you mean --mode full?',
    ],
    [['runs', 'start', 'acme', '--mode', 'incr'], 'did you mean --mode incremental?'],
    [['runs', 'start', 'acme', '--mode', 'dlq-retry'], 'did you mean --mode dlq_retry?'],
    [
      ['runs', 'list', '--state', 'runing'],
      '--state "runing" is not one of queued, running, succeeded, failed, cancelled; did you mean --state running?',
    ],
    [['runs', 'list', '--state', 'FAILED'], 'did you mean --state failed?'],
    [
      ['local', '--log-format', 'prety'],
      '--log-format "prety" is not one of json, pretty; did you mean --log-format pretty?',
    ],
    [['dlq', 'list', 'acme', '--error-class', 'transiant'], 'did you mean --error-class transient?'],
    [
      ['sources', 'put', 'acme', '--connector', 'github', '--config', '{}'],
      'did you mean --connector github-issues?',
    ],
    [['sources', 'list', '--limit', '500'], '--limit 500 is out of range: 1–100; did you mean --limit 100?'],
    [['runs', 'list', '--limit', '0'], '--limit 0 is out of range: 1–100; did you mean --limit 1?'],
    [['dlq', 'list', 'acme', '--limit', 'ten'], '--limit must be a whole number from 1 to 100, got "ten"'],
    [
      ['items', 'export', 'acme', '--output', 'x.jsonl', '--page-size', '1000'],
      '--page-size 1000 is out of range: 1–100',
    ],
    [
      ['runs', 'start', 'acme', '--mode', 'full', '--partitions', '0'],
      '--partitions 0 is out of range: 1–64',
    ],
    [
      [
        'sources',
        'put',
        'acme',
        '--connector',
        'rest-json',
        '--config',
        '{}',
        '--schedule',
        'rate(1 hour):incremntal',
      ],
      'did you mean "rate(1 hour):incremental"?',
    ],
  ])('harvester %j is refused with the fix, and sends nothing', async (args, message) => {
    const res = await harvester(...args);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain(message);
    expect(res.stderr).not.toMatch(/Invalid option|Too big|Too small/);
    expect(res.requests).toBe(0);
  });

  it('offers no guess when nothing is close', async () => {
    const res = await harvester('runs', 'start', 'acme', '--mode', 'everything');
    expect(res.stderr).toContain('--mode "everything" is not one of');
    expect(res.stderr).not.toContain('did you mean');
  });

  it('lets a valid value through to the API', async () => {
    const res = await harvester('runs', 'list', '--state', 'running', '--limit', '100');
    expect(res.requests).toBe(1);
    expect(api.seen.at(-1)?.path).toBe('/runs?limit=100&state=running');
  });

  it('closest picks one value or none', () => {
    expect(closest('ful', ['full', 'incremental'])).toBe('full');
    expect(closest('xyz', ['full', 'incremental'])).toBeUndefined();
  });

  it('knows the connectors and the page limit the API knows', () => {
    expect([...CONNECTOR_CHOICES].sort()).toEqual([...CONNECTOR_NAMES].sort());
    expect(MAX_LIST_LIMIT).toBe(MAX_PAGE_LIMIT);
  });
});
