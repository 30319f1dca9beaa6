import { readFileSync } from 'node:fs';
import { App, type CfnElement } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { addHarvester } from '../../infra/harvester-app.js';
import {
  API_RESERVED_CONCURRENCY,
  FUNCTION_TIMEOUT_SECONDS,
  SOURCE_CHECK_RESERVED_CONCURRENCY,
} from '../../infra/settings.js';
import type { HarvesterStack } from '../../infra/stack.js';
import {
  SOURCE_TEST_BUDGET_WAIT_MS,
  SOURCE_TEST_LEASE_MS,
  SOURCE_TEST_TIMEOUT_MS,
} from '../../lib/api/source-test.js';

/**
 * The connection check runs in a function of its own (functions/source-check.ts), so that the
 * API role holds no connector-secret permission at all: the template gives the secret reads, the
 * rate budget and the check slots to the check function's role, and to the API role only the
 * right to invoke exactly that function.
 */

// Bundling skipped (`aws:cdk:bundling-stacks: []`): only the template matters here.
const cdkJson = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')) as {
  context: Record<string, unknown>;
};
const synth = (props: Parameters<typeof addHarvester>[1] = {}) => {
  const app = new App({ context: { ...cdkJson.context, 'aws:cdk:bundling-stacks': [] } });
  const stack = addHarvester(app, props);
  return { stack, template: Template.fromStack(stack) };
};
const plain = synth();
// A shared secret in SSM and one in Secrets Manager, outside `harvester/`: granted by name.
const shared = synth({
  sharedSecretRefs: {
    'ssm:/org/github-token': ['https://api.github.com'],
    'secretsmanager:org/gitlab-token': ['https://gitlab.com'],
  },
});

type Statement = { Effect: string; Action: string | string[]; Resource: unknown; Condition?: unknown };
const list = <T>(value: T | T[]): T[] => (Array.isArray(value) ? value : [value]);
const idOf = (stack: HarvesterStack, construct: { node: { defaultChild?: unknown } }) =>
  stack.getLogicalId(construct.node.defaultChild as CfnElement);

/** Every (action, resource) pair the role's policies allow, the resource as its template JSON. */
function grants(
  { stack, template }: ReturnType<typeof synth>,
  role: { node: { defaultChild?: unknown } },
): { action: string; resource: string }[] {
  const roleId = idOf(stack, role);
  return Object.values(template.findResources('AWS::IAM::Policy'))
    .filter((p) => (p.Properties.Roles as { Ref: string }[]).some((r) => r.Ref === roleId))
    .flatMap((p) => (p.Properties.PolicyDocument as { Statement: Statement[] }).Statement)
    .filter((s) => s.Effect === 'Allow')
    .flatMap((s) =>
      list(s.Action).flatMap((action) =>
        list(s.Resource).map((resource) => ({ action, resource: JSON.stringify(resource) })),
      ),
    );
}

const SECRET_READS = ['ssm:GetParameter', 'secretsmanager:GetSecretValue'];
const secretReads = (pairs: { action: string; resource: string }[]) =>
  pairs.filter((g) => SECRET_READS.includes(g.action));
const api = (synthed: ReturnType<typeof synth>) => synthed.stack.harvester.adminApi;

describe.each([
  ['no shared secrets', plain],
  ['shared secrets', shared],
])('the API role reads no connector secret (%s)', (_case, synthed) => {
  const apiGrants = grants(synthed, api(synthed).handler.role);
  const checkGrants = grants(synthed, api(synthed).sourceCheck.role);
  const cursorKey = JSON.stringify({ Ref: idOf(synthed.stack, api(synthed).cursorKey) });

  it('the API role reads exactly one secret, its cursor key, and no SSM parameter at all', () => {
    expect(secretReads(apiGrants)).toEqual([
      { action: 'secretsmanager:GetSecretValue', resource: cursorKey },
    ]);
    expect(apiGrants.filter((g) => g.action.startsWith('ssm:'))).toEqual([]);
  });

  it('the check function’s role reads harvester/* in SSM and Secrets Manager, and not the cursor key', () => {
    const reads = secretReads(checkGrants);
    expect(reads).toEqual(
      expect.arrayContaining([
        { action: 'ssm:GetParameter', resource: expect.stringContaining(':parameter/harvester/*') },
        { action: 'secretsmanager:GetSecretValue', resource: expect.stringContaining(':secret:harvester/*') },
      ]),
    );
    expect(reads.map((g) => g.resource)).not.toContain(cursorKey);
  });

  it('the API role may invoke exactly the check function, and nothing else in Lambda', () => {
    const checkFn = JSON.stringify({
      'Fn::GetAtt': [idOf(synthed.stack, api(synthed).sourceCheck.fn), 'Arn'],
    });
    expect(apiGrants.filter((g) => g.action.startsWith('lambda:'))).toEqual([
      { action: 'lambda:InvokeFunction', resource: checkFn },
    ]);
    expect(checkGrants.filter((g) => g.action.startsWith('lambda:'))).toEqual([]);
  });
});

it('the shared secrets are granted by name to the check function, not to the API', () => {
  const reads = secretReads(grants(shared, api(shared).sourceCheck.role)).map((g) => g.resource);
  expect(reads.some((r) => r.includes(':parameter/org/github-token'))).toBe(true);
  expect(reads.some((r) => r.includes(':secret:org/gitlab-token-??????'))).toBe(true);
  const apiReads = secretReads(grants(shared, api(shared).handler.role)).map((g) => g.resource);
  expect(apiReads.filter((r) => r.includes('org/'))).toEqual([]);
});

describe('what moved from the API role to the check function’s', () => {
  const { stack } = plain;
  const apiGrants = grants(plain, stack.harvester.adminApi.handler.role);
  const checkGrants = grants(plain, stack.harvester.adminApi.sourceCheck.role);
  const table = (key: 'rateBudgets' | 'sources') =>
    JSON.stringify({ 'Fn::GetAtt': [idOf(stack, stack.harvester.tables[key]), 'Arn'] });
  const on = (pairs: { action: string; resource: string }[], resource: string) =>
    pairs.filter((g) => g.resource.includes(resource)).map((g) => g.action);
  const macKey = `"${idOf(stack, stack.harvester.configMac.key)}"`;

  it('the rate budgets table (budget and check slots) is the check function’s alone', () => {
    expect(on(apiGrants, table('rateBudgets'))).toEqual([]);
    expect(on(checkGrants, table('rateBudgets')).sort()).toEqual(['dynamodb:GetItem', 'dynamodb:PutItem']);
  });

  it('the check function reads the Sources table (row and binding) and writes nothing there', () => {
    const sourcesId = `"${idOf(stack, stack.harvester.tables.sources)}"`;
    expect(on(checkGrants, sourcesId)).toEqual(['dynamodb:GetItem']);
  });

  it('the check function verifies config MACs and signs none', () => {
    expect(on(checkGrants, macKey)).toEqual(['kms:VerifyMac']);
    expect(on(apiGrants, macKey).sort()).toEqual(['kms:GenerateMac', 'kms:VerifyMac']);
  });

  it('the check function holds nothing else: no queue, bus, schedule, run or item', () => {
    const known = [table('rateBudgets'), `"${idOf(stack, stack.harvester.tables.sources)}"`, macKey];
    const rest = checkGrants.filter(
      (g) =>
        !known.some((k) => g.resource.includes(k)) &&
        !SECRET_READS.includes(g.action) &&
        !g.action.startsWith('logs:') &&
        !g.action.startsWith('xray:'),
    );
    expect(rest).toEqual([]);
  });
});

describe('the check function’s limits', () => {
  const { stack, template } = plain;
  const fn = template.findResources('AWS::Lambda::Function')[
    idOf(stack, stack.harvester.adminApi.sourceCheck.fn)
  ] as {
    Properties: Record<string, unknown>;
  };
  const apiFn = template.findResources('AWS::Lambda::Function')[
    idOf(stack, stack.harvester.adminApi.handler.fn)
  ] as {
    Properties: { Environment: { Variables: Record<string, unknown> } };
  };

  it('reserves (and caps) its concurrency, below the API function’s, whose instances wait on it', () => {
    expect(fn.Properties.ReservedConcurrentExecutions).toBe(SOURCE_CHECK_RESERVED_CONCURRENCY);
    expect(SOURCE_CHECK_RESERVED_CONCURRENCY).toBeGreaterThan(0);
    expect(SOURCE_CHECK_RESERVED_CONCURRENCY).toBeLessThan(API_RESERVED_CONCURRENCY / 2);
  });

  it('times out after the check’s own bound and its bookkeeping, well before the API function', () => {
    expect(fn.Properties.Timeout).toBe(FUNCTION_TIMEOUT_SECONDS.sourceCheck);
    // The source's 5 s, a budget sleep begun just before they end, verify, read and answer.
    expect((SOURCE_TEST_TIMEOUT_MS + SOURCE_TEST_BUDGET_WAIT_MS + 5_000) / 1_000).toBeLessThanOrEqual(
      FUNCTION_TIMEOUT_SECONDS.sourceCheck,
    );
    // The API hears the function's answer (or its timeout) and still has time to answer it.
    expect(FUNCTION_TIMEOUT_SECONDS.sourceCheck + 5).toBeLessThan(FUNCTION_TIMEOUT_SECONDS.api);
    // A check's slot outlives the longest the function can run: no third check slips in meanwhile.
    expect(SOURCE_TEST_LEASE_MS).toBeGreaterThan(FUNCTION_TIMEOUT_SECONDS.sourceCheck * 1_000);
  });

  it('tells the API function where it is, and the API only', () => {
    const arn = { 'Fn::GetAtt': [idOf(stack, stack.harvester.adminApi.sourceCheck.fn), 'Arn'] };
    expect(apiFn.Properties.Environment.Variables.SOURCE_CHECK_FUNCTION_ARN).toEqual(arn);
    const others = Object.entries(template.findResources('AWS::Lambda::Function')).filter(
      ([, f]) =>
        (f.Properties.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables
          ?.SOURCE_CHECK_FUNCTION_ARN !== undefined,
    );
    expect(others.map(([id]) => id)).toEqual([idOf(stack, stack.harvester.adminApi.handler.fn)]);
  });
});
