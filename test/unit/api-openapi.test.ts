import { describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../../lib/api/openapi.js';
import { API_ROUTES } from '../../lib/api/routes/index.js';
import { CONNECTOR_NAMES } from '../../lib/connectors/registry.js';

// biome-ignore lint/suspicious/noExplicitAny: the document is walked as plain JSON
type Json = any;
const doc: Json = JSON.parse(JSON.stringify(buildOpenApiDocument(API_ROUTES)));
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];

function operations(): { path: string; method: string; op: Json }[] {
  return Object.entries(doc.paths as Record<string, Json>).flatMap(([path, item]) =>
    METHODS.filter((m) => item[m]).map((method) => ({ path, method, op: item[method] })),
  );
}

function refs(node: Json, found: string[] = []): string[] {
  if (Array.isArray(node)) for (const item of node) refs(item, found);
  else if (node && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string') found.push(value);
      else refs(value, found);
    }
  }
  return found;
}

function resolve(ref: string): unknown {
  if (!ref.startsWith('#/')) return undefined;
  return ref
    .slice(2)
    .split('/')
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce<Json>((node, part) => (node === undefined ? undefined : node[part]), doc);
}

describe('the OpenAPI document', () => {
  it('is OpenAPI 3.1 with a title and version', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info).toMatchObject({ title: expect.any(String), version: expect.any(String) });
  });

  it('lists every route with its method, and nothing else', () => {
    const listed = operations()
      .map(({ path, method }) => `${method.toUpperCase()} ${path}`)
      .sort();
    const declared = API_ROUTES.map((r) => `${r.method} ${r.path}`).sort();
    expect(listed).toEqual(declared);
    expect(listed).toEqual(
      expect.arrayContaining([
        'PUT /sources/{sourceId}',
        'GET /sources',
        'GET /sources/{sourceId}',
        'DELETE /sources/{sourceId}',
        'POST /sources/{sourceId}/runs',
        'GET /sources/{sourceId}/runs',
        'GET /sources/{sourceId}/runs/{runId}',
        'POST /sources/{sourceId}/runs/{runId}/cancel',
        'GET /runs/{runId}',
        'POST /runs/{runId}/cancel',
        'GET /sources/{sourceId}/dead-letters',
        'POST /sources/{sourceId}/dead-letters/retry',
        'GET /openapi.json',
      ]),
    );
  });

  it('gives every operation a unique operationId, a tag and described responses', () => {
    const ids = operations().map(({ op }) => op.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    for (const { op } of operations()) {
      expect(op.tags).toHaveLength(1);
      expect(Object.keys(op.responses).length).toBeGreaterThan(1);
      for (const response of Object.values<Json>(op.responses))
        expect(response.description).toEqual(expect.any(String));
    }
  });

  it('declares every path template parameter as a required path parameter', () => {
    for (const { path, op } of operations()) {
      const names = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
      const declared = (op.parameters ?? []).filter((p: Json) => p.in === 'path');
      expect(declared.map((p: Json) => p.name).sort()).toEqual(names.sort());
      for (const p of declared) expect(p.required).toBe(true);
    }
  });

  it('answers errors as problem+json and successes as JSON', () => {
    for (const { op } of operations()) {
      for (const [status, response] of Object.entries<Json>(op.responses)) {
        if (!response.content) continue;
        expect(Object.keys(response.content)).toEqual([
          Number(status) >= 400 ? 'application/problem+json' : 'application/json',
        ]);
      }
    }
  });

  it('documents a JSON body on every route that takes one, and 413/415 with it', () => {
    for (const route of API_ROUTES.filter((r) => r.body)) {
      const op = doc.paths[route.path][route.method.toLowerCase()];
      expect(op.requestBody.content['application/json'].schema).toBeDefined();
      expect(op.responses).toHaveProperty('413');
      expect(op.responses).toHaveProperty('415');
    }
  });

  it('resolves every $ref', () => {
    const all = refs(doc);
    expect(all.length).toBeGreaterThan(10);
    for (const ref of all) expect(resolve(ref), ref).toBeDefined();
  });

  it('requires SigV4 (IAM) authorization everywhere', () => {
    expect(doc.components.securitySchemes.sigv4).toMatchObject({
      type: 'apiKey',
      in: 'header',
      name: 'Authorization',
      'x-amazon-apigateway-authtype': 'awsSigv4',
    });
    expect(doc.security).toEqual([{ sigv4: [] }]);
  });

  it('describes each connector config and offers them for a source body', () => {
    expect(doc.components.schemas.RestJsonConfig.properties.url).toBeDefined();
    expect(doc.components.schemas.GithubIssuesConfig.properties.owner).toBeDefined();
    expect(doc.components.schemas.S3ObjectsConfig.properties.bucket).toBeDefined();
    expect(doc.components.schemas.PutSourceRequest.properties.config.oneOf).toHaveLength(
      CONNECTOR_NAMES.length,
    );
    expect(doc.components.schemas.PutSourceRequest.additionalProperties).toBe(false);
  });
});

describe('the items routes in the OpenAPI document', () => {
  it.each([
    ['/sources/{sourceId}/items', 'ItemPage'],
    ['/sources/{sourceId}/items/{entityId}', 'Item'],
    ['/sources/{sourceId}/items/{entityId}/explain', 'ItemExplanation'],
  ])('%s answers 200 (%s) and every problem status it may answer', (path, schema) => {
    const op = doc.paths[path]?.get;
    expect(Object.keys(op.responses).sort()).toEqual([
      '200',
      '400',
      '403',
      '404',
      '405',
      '413',
      '415',
      '500',
    ]);
    expect(op.responses['200'].content['application/json'].schema.$ref).toBe(
      `#/components/schemas/${schema}`,
    );
    expect(op.responses['404'].content['application/problem+json']).toBeDefined();
  });

  it('documents the change-feed parameters of the listing', () => {
    const names = doc.paths['/sources/{sourceId}/items'].get.parameters.map((p: Json) => p.name).sort();
    expect(names).toEqual(['changedSince', 'cursor', 'includeTombstoned', 'limit', 'sourceId']);
  });
});
