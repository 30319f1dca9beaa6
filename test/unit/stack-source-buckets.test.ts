import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, type CfnElement } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import { addHarvester } from '../../infra/harvester-app.js';
import { resolveSettings } from '../../infra/settings.js';
import type { HarvesterStack } from '../../infra/stack.js';

/**
 * The stack setting `sourceBuckets`: the page worker may list and read exactly those buckets for
 * `s3-objects` sources, and cdk-nag still has nothing unacknowledged to say.
 */

const cdkJson = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')) as {
  context: Record<string, unknown>;
};
let app: App;
let stack: HarvesterStack;
let template: Template;

beforeAll(() => {
  app = new App({
    context: { ...cdkJson.context, 'harvester:sourceBuckets': 'acme-exports, acme.logs' },
    outdir: mkdtempSync(join(tmpdir(), 'harvester-cdk-')),
  });
  stack = addHarvester(app);
  template = Template.fromStack(stack);
}, 180_000);

type Statement = { Action: string | string[]; Resource: unknown };

function statementsOf(role: { node: { defaultChild?: unknown } }): Statement[] {
  const roleId = stack.getLogicalId(role.node.defaultChild as CfnElement);
  return Object.values(template.findResources('AWS::IAM::Policy'))
    .filter((p) => (p.Properties.Roles as { Ref: string }[]).some((r) => r.Ref === roleId))
    .flatMap((p) => (p.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
}

const s3Statements = (statements: Statement[]) =>
  statements.filter((s) => [s.Action].flat().some((a) => a.startsWith('s3:')));

describe('sourceBuckets', () => {
  it('grants the worker ListBucket on each bucket and GetObject on its objects, nothing else in S3', () => {
    const granted = s3Statements(statementsOf(stack.harvester.pipeline.worker.role));
    const text = JSON.stringify(granted);
    expect(granted.flatMap((s) => [s.Action].flat()).sort()).toEqual(['s3:GetObject', 's3:ListBucket']);
    for (const bucket of ['acme-exports', 'acme.logs']) {
      expect(text).toContain(`:s3:::${bucket}"`);
      expect(text).toContain(`:s3:::${bucket}/*"`);
    }
    expect(text).not.toMatch(/s3:::\*/);
  });

  it('pins every S3 grant to the stack account (s3:ResourceAccount), so a same-named bucket elsewhere is not read', () => {
    const granted = s3Statements(statementsOf(stack.harvester.pipeline.worker.role)) as (Statement & {
      Condition?: unknown;
    })[];
    expect(granted.length).toBe(2);
    for (const statement of granted)
      expect(statement.Condition).toEqual({
        StringEquals: { 's3:ResourceAccount': { Ref: 'AWS::AccountId' } },
      });
  });

  it('tells the worker the account that must own every bucket it reads (ExpectedBucketOwner on each request)', () => {
    const workerId = stack.getLogicalId(stack.harvester.pipeline.worker.fn.node.defaultChild as CfnElement);
    const worker = template.findResources('AWS::Lambda::Function')[workerId];
    expect(worker?.Properties.Environment.Variables.SOURCE_BUCKET_OWNER).toEqual({ Ref: 'AWS::AccountId' });
  });

  it('grants the connection-check function the same reads, so a check lists the bucket as a run would', () => {
    const check = s3Statements(statementsOf(stack.harvester.adminApi.sourceCheck.role));
    const worker = s3Statements(statementsOf(stack.harvester.pipeline.worker.role));
    expect(check).toEqual(worker);
  });

  it('grants no other function any S3 access', () => {
    for (const role of [
      stack.harvester.pipeline.drain.role,
      stack.harvester.adminApi.handler.role,
      stack.harvester.scheduling.reaper.role,
    ]) {
      expect(s3Statements(statementsOf(role))).toEqual([]);
    }
  });

  it('leaves cdk-nag with no unacknowledged finding', () => {
    const findings = new AwsSolutionsChecks()
      .validateScope(app)
      .violations.flatMap((v) => v.violatingResources.map((r) => `${v.ruleName} @ ${r.constructPath}`));
    expect(findings).toEqual([]);
  });

  it('refuses a setting that is not a list of bucket names (no wildcards into IAM)', () => {
    const bad = new App({ context: { 'harvester:sourceBuckets': 'acme-*' } });
    expect(() => resolveSettings(bad)).toThrow(/sourceBuckets must list S3 bucket names/);
    expect(resolveSettings(new App()).sourceBuckets).toEqual([]);
  });
});
