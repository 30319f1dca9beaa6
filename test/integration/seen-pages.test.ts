import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { destroyAwsClients } from '../../lib/aws/clients.js';
import { SeenPageStore } from '../../lib/store/seen-pages.js';
import { setUpTestAws, type TestAws } from '../support/aws.js';
import { logRequests, type RequestLog } from '../support/request-log.js';

/**
 * The seen record of a listed page, on the store directly: deliveries of one page that listed the
 * same ids, other ids, or raced each other. The record only grows (see docs/items.md).
 */

let aws: TestAws;
let pages: SeenPageStore;
let requests: RequestLog;
let scopes = 0;
/** A scope of its own for each test. */
const newScope = () => ({ runId: `seen-store-${++scopes}`, epoch: 1, chain: 'run' });

beforeAll(async () => {
  aws = await setUpTestAws('seenpages');
  pages = new SeenPageStore(aws.clients.doc, aws.names.syncRunsTable);
  requests = logRequests(aws.clients.dynamo);
});
afterAll(() => destroyAwsClients(aws.clients));

describe('the seen record of a page', () => {
  it('is written once by a delivery that lists the same ids again: no read, no merge', async () => {
    const scope = newScope();
    await pages.put(scope, 1, ['b', 'a'], 0);
    requests.reset();

    await pages.put(scope, 1, ['a', 'b'], 0);

    expect(requests.count('PutItem')).toBe(1);
    expect(requests.count('GetItem')).toBe(0);
    expect(await pages.listed(scope, 1)).toEqual(['a', 'b']);
  });

  it('keeps the ids of an earlier delivery when a later one lists others', async () => {
    const scope = newScope();
    await pages.put(scope, 1, ['a', 'b'], 0);

    // The page fetched again after a crash, the source edited meanwhile: 'b' moved away, 'c' came.
    await pages.put(scope, 1, ['a', 'c'], 0);

    expect(await pages.listed(scope, 1)).toEqual(['a', 'b', 'c']);
  });

  it('keeps the ids of two deliveries that write it at once', async () => {
    const scope = newScope();
    await pages.put(scope, 1, ['a'], 0);

    await Promise.all([pages.put(scope, 1, ['a', 'x'], 0), pages.put(scope, 1, ['a', 'y'], 0)]);

    expect(await pages.listed(scope, 1)).toEqual(['a', 'x', 'y']);
  });
});
