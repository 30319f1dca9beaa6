import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiDeps } from '../../lib/api/deps.js';
import { destroyAwsClients } from '../../lib/aws/clients.js';
import { PARSE_BUDGET } from '../../lib/json/budget.js';
import { callApi, setUpTestApi } from '../support/api.js';
import type { TestAws } from '../support/aws.js';

/**
 * `sources test` against a source whose record nests deeper than anything should: the check
 * answers with a classified problem (or a sample when the record is within the parse budget),
 * never a 500 from a stack overflow while the answer is serialized.
 */

let aws: TestAws;
let deps: ApiDeps;
let base = '';
let stop: () => Promise<void> = async () => {};

/** A record holding `depth` nested arrays under `deep`. */
function nested(depth: number): string {
  return `{"data":[{"id":"d1","updatedAt":"2024-01-01T00:00:00.000Z","deep":${'['.repeat(depth)}${']'.repeat(depth)}}]}`;
}

beforeAll(async () => {
  ({ aws, deps } = await setUpTestApi('source-test-deep'));
  const server = createServer((request, response) => {
    const depth = Number(new URL(request.url ?? '/', 'http://h').pathname.split('/')[1]);
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(nested(depth));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  stop = () => new Promise((resolve) => server.close(() => resolve()));
});
afterAll(async () => {
  await stop();
  destroyAwsClients(aws.clients);
});

async function check(sourceId: string, depth: number) {
  const config = {
    url: `${base}/${depth}`,
    itemsPath: 'data',
    idField: 'id',
    updatedAtField: 'updatedAt',
    pagination: { type: 'cursor', cursorParam: 'cursor', nextCursorPath: 'next_cursor' },
  };
  const put = await callApi(deps, 'PUT', `/sources/${sourceId}`, { connector: 'rest-json', config });
  expect(put.json).toMatchObject({ sourceId });
  return callApi(deps, 'POST', `/sources/${sourceId}/test`);
}

describe('a connection check of a deep record', () => {
  it('past the parse budget: answered 200 with a permanent problem naming the depth, never 500', async () => {
    const res = await check('deep-200k', 200_000);

    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ ok: false, sample: null, problem: { errorClass: 'permanent' } });
    expect(res.json.problem.reason).toContain(`nests deeper than ${PARSE_BUDGET.depth} levels`);
  });

  it('within the parse budget: answered with the sample', async () => {
    const res = await check('deep-90', 90);

    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ ok: true, sample: { id: 'd1' } });
  });
});
