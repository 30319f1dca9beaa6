import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../../lib/cli/main.js';
import { captureIo } from '../support/cli-io.js';
import { type FakeApi, startFakeApi } from '../support/fake-api.js';

let api: FakeApi | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

function notFound(sourceId: string) {
  return {
    status: 404,
    problem: true,
    body: {
      type: 'tag:harvester,2025:problems/not-found',
      title: 'Source not found',
      status: 404,
      detail: `source ${sourceId} not found`,
      instance: `/sources/${sourceId}`,
      requestId: 'r1',
      sourceId,
    },
  };
}

const SOURCES = {
  status: 200,
  body: { items: [{ sourceId: 'acme' }, { sourceId: 'github-main' }], nextCursor: null },
};

describe('a source that is not there', () => {
  it('is refused with the closest source id and the command that lists them', async () => {
    api = await startFakeApi({ 'GET /sources/acne': notFound('acne'), 'GET /sources': SOURCES });
    const io = captureIo();

    const code = await runCli(['node', 'harvester', '--endpoint', api.url, 'sources', 'get', 'acne'], io);

    expect(code).toBe(1);
    const lines = io.stderr().trimEnd().split('\n');
    expect(lines[0]).toBe('error: Source not found: source acne not found');
    expect(lines).toContain('  did you mean acme?');
    expect(lines).toContain(`  list the sources: harvester --endpoint ${api.url} sources list`);
  });

  it('suggests nothing when no source is close, but still names the listing', async () => {
    api = await startFakeApi({ 'GET /sources/zzzzzz': notFound('zzzzzz'), 'GET /sources': SOURCES });
    const io = captureIo();

    await runCli(['node', 'harvester', '--endpoint', api.url, 'sources', 'get', 'zzzzzz'], io);

    expect(io.stderr()).not.toContain('did you mean');
    expect(io.stderr()).toContain('list the sources:');
  });

  it('keeps title and detail when the detail says something else', async () => {
    api = await startFakeApi({
      'GET /sources': {
        status: 400,
        problem: true,
        body: {
          type: 'x',
          title: 'Invalid request',
          status: 400,
          detail: 'limit: too big',
          instance: '/sources',
          requestId: 'r',
        },
      },
    });
    const io = captureIo();

    await runCli(['node', 'harvester', '--endpoint', api.url, 'sources', 'list'], io);

    expect(io.stderr().split('\n')[0]).toBe('error: Invalid request: limit: too big');
  });
});
