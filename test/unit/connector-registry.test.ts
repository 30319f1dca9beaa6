import { describe, expect, it } from 'vitest';
import {
  CONNECTOR_NAMES,
  getConnector,
  InvalidConnectorConfigError,
  parseConnectorConfig,
  UnknownConnectorError,
} from '../../lib/connectors/registry.js';

function issuesOf(name: string, config: unknown) {
  try {
    parseConnectorConfig(name, config);
  } catch (error) {
    if (error instanceof InvalidConnectorConfigError) return error.issues;
    throw error;
  }
  throw new Error('expected the config to be rejected');
}

describe('getConnector', () => {
  it('finds every shipped connector by its manifest name', () => {
    expect(CONNECTOR_NAMES).toEqual(['github-issues', 'gitlab-issues', 'rest-json', 's3-objects']);
    for (const name of CONNECTOR_NAMES) expect(getConnector(name).manifest.name).toBe(name);
  });

  it('names the known connectors when asked for an unknown one', () => {
    expect(() => getConnector('gitlab')).toThrow(UnknownConnectorError);
    expect(() => getConnector('gitlab')).toThrow(
      'unknown connector "gitlab"; known connectors: github-issues, gitlab-issues, rest-json, s3-objects',
    );
  });

  it('does not mistake a prototype property for a connector', () => {
    expect(() => getConnector('toString')).toThrow(UnknownConnectorError);
  });
});

describe('parseConnectorConfig', () => {
  it('returns the config with its defaults applied', () => {
    expect(parseConnectorConfig('github-issues', { owner: 'octo', repo: 'hello' })).toMatchObject({
      baseUrl: 'https://api.github.com',
      perPage: 100,
      includePullRequests: true,
    });
  });

  it('reports each bad field with its path and a readable message', () => {
    expect(issuesOf('github-issues', { owner: 'octo', perPage: 500, perpage: 5 })).toEqual([
      { path: 'repo', message: 'is required' },
      { path: 'perPage', message: expect.stringMatching(/100/) },
      { path: 'perpage', message: 'unknown field' },
    ]);
  });

  it('reports nested fields of a rest-json pagination by dot path', () => {
    const issues = issuesOf('rest-json', {
      url: 'https://api.example.com/records',
      idField: 'id',
      updatedAtField: 'updatedAt',
      pagination: { type: 'cursor', cursorParam: 'after' },
    });
    expect(issues).toEqual([{ path: 'pagination.nextCursorPath', message: 'is required' }]);
  });

  it('names the allowed pagination types for an unknown one', () => {
    const issues = issuesOf('rest-json', {
      url: 'https://api.example.com/records',
      idField: 'id',
      updatedAtField: 'updatedAt',
      pagination: { type: 'offset' },
    });
    expect(issues).toEqual([{ path: 'pagination.type', message: expect.stringContaining("'next-url'") }]);
  });

  it('says which type a field must have', () => {
    expect(issuesOf('github-issues', { owner: 'octo', repo: 'hello', includePullRequests: 'yes' })).toEqual([
      { path: 'includePullRequests', message: 'must be a boolean' },
    ]);
  });

  it('reports a config that is not an object at the root', () => {
    expect(issuesOf('rest-json', 'url=x')).toEqual([{ path: '', message: 'must be an object' }]);
  });

  it('summarises the issues in the error message', () => {
    expect(() => parseConnectorConfig('github-issues', { owner: 'octo' })).toThrow(
      'invalid github-issues config: repo: is required',
    );
  });

  it('rejects an unknown connector before looking at the config', () => {
    expect(() => parseConnectorConfig('nope', {})).toThrow(UnknownConnectorError);
  });
});
