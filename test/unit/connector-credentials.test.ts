import { describe, expect, it } from 'vitest';
import { credentialKey } from '../../lib/budget/credential.js';
import { CONNECTORS } from '../../lib/connectors/registry.js';

/** Which rate budget each connector's requests spend: connector + origin + secret reference. */
describe('the credential a source spends', () => {
  const credentialOf = (name: keyof typeof CONNECTORS, config: unknown) => {
    const connector = CONNECTORS[name] as (typeof CONNECTORS)[keyof typeof CONNECTORS] & {
      credential?: (config: unknown) => unknown;
      configSchema: { parse(value: unknown): unknown };
    };
    return connector.credential?.(connector.configSchema.parse(config)) ?? null;
  };

  it.each([
    [
      'github-issues on GitHub Enterprise: the origin, not the API path',
      'github-issues',
      { owner: 'o', repo: 'r', baseUrl: 'https://ghe.example.com/api/v3', tokenRef: 'ssm:/org/gh' },
      { origin: 'https://ghe.example.com', secretRef: 'ssm:/org/gh' },
    ],
    [
      'github-issues without a token (counted per origin)',
      'github-issues',
      { owner: 'o', repo: 'r' },
      { origin: 'https://api.github.com', secretRef: null },
    ],
    [
      'gitlab-issues',
      'gitlab-issues',
      { project: 'g/p', tokenRef: 'ssm:/harvester/s/token' },
      { origin: 'https://gitlab.com', secretRef: 'ssm:/harvester/s/token' },
    ],
    [
      'rest-json with a configured limit',
      'rest-json',
      {
        url: 'https://api.example.com/v1/records',
        itemsPath: 'data',
        idField: 'id',
        updatedAtField: 'updatedAt',
        pagination: { type: 'page' },
        auth: { secretRef: 'ssm:/harvester/s/key' },
        rateLimit: { requests: 100, perSeconds: 60 },
      },
      {
        origin: 'https://api.example.com',
        secretRef: 'ssm:/harvester/s/key',
        configured: { limit: 100, windowSeconds: 60 },
      },
    ],
  ] as const)('%s', (_name, connector, config, expected) => {
    expect(credentialOf(connector, config)).toEqual(expected);
  });

  it('is none for s3-objects: S3 throttles through its own SDK answers', () => {
    expect(credentialOf('s3-objects', { bucket: 'acme-exports' })).toBeNull();
  });

  it('keys a budget by a hash that names neither the secret reference nor its value', () => {
    const key = credentialKey({
      connector: 'github-issues',
      origin: 'https://api.github.com',
      secretRef: 'ssm:/org/gh',
    });
    expect(key).toMatch(/^cred-[0-9a-f]{32}$/);
    expect(key).not.toContain('gh');
    expect(
      credentialKey({
        connector: 'github-issues',
        origin: 'https://api.github.com',
        secretRef: 'ssm:/org/other',
      }),
    ).not.toBe(key);
  });
});
