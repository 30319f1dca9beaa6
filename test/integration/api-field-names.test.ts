import { ulid } from 'ulid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiDeps } from '../../lib/api/deps.js';
import { destroyAwsClients } from '../../lib/aws/clients.js';
import { callApi, setUpTestApi } from '../support/api.js';
import type { TestAws } from '../support/aws.js';

/*
 * A source config is data too: query parameters, headers and field paths named like JavaScript
 * properties are saved and read back as sent, or refused with a 4xx that says why; never a 500.
 */

let aws: TestAws;
let deps: ApiDeps;

beforeAll(async () => {
  ({ aws, deps } = await setUpTestApi('apikeys'));
});
afterAll(() => destroyAwsClients(aws.clients));

const NAMES = ['constructor', 'prototype', 'toString', 'hasOwnProperty'];

/** A rest-json config whose `extraQuery` holds `name` (built from JSON, so `__proto__` is a key). */
function configWith(name: string): unknown {
  return JSON.parse(
    `{"url":"http://127.0.0.1:9/records","itemsPath":"data","idField":"id","updatedAtField":"updatedAt",
      "pagination":{"type":"cursor","cursorParam":"cursor","nextCursorPath":"next_cursor"},
      "extraQuery":{${JSON.stringify(name)}:"x"}}`,
  );
}

describe('a source config holding keys named like JavaScript properties', () => {
  it.each(NAMES)('with extraQuery key %s is saved and read back exactly', async (name) => {
    const id = `s-${ulid().toLowerCase()}`;

    const put = await callApi(deps, 'PUT', `/sources/${id}`, {
      connector: 'rest-json',
      config: configWith(name),
    });

    expect(put.status).toBe(201);
    const got = await callApi(deps, 'GET', `/sources/${id}`);
    expect(got.status).toBe(200);
    expect(Object.entries(got.json.config.extraQuery)).toEqual([[name, 'x']]);
  });

  it.each(['__proto__', 'a\ud800'])(
    'with extraQuery key %j is refused with a 400 that names it',
    async (name) => {
      const id = `s-${ulid().toLowerCase()}`;

      const put = await callApi(deps, 'PUT', `/sources/${id}`, {
        connector: 'rest-json',
        config: configWith(name),
      });

      expect(put.status).toBe(400);
      expect(put.json.detail).toContain('config.extraQuery');
    },
  );
});
