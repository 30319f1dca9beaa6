import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildExample } from '../../examples/existing-stack/app.js';

// The example app of examples/: Harvester added as a construct to a stack of one's own.
let template: Template;

beforeAll(() => {
  const app = new App({ outdir: mkdtempSync(join(tmpdir(), 'harvester-example-')) });
  template = Template.fromStack(buildExample(app));
}, 180_000);

describe('the Harvester construct in an existing stack', () => {
  it('brings its tables, functions and queues into that stack', () => {
    template.resourceCountIs('AWS::DynamoDB::Table', 5);
    expect(Object.keys(template.findResources('AWS::Lambda::Function')).length).toBeGreaterThanOrEqual(5);
    template.hasResourceProperties('AWS::SQS::Queue', {});
  });

  it('takes its settings as props', () => {
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      ScalingConfig: { MaximumConcurrency: 5 },
    });
  });

  it('exports the outputs a deployment needs, under the construct’s name', () => {
    const outputs = Object.keys(template.findOutputs('*'));
    for (const name of ['ApiUrl', 'DashboardUrl', 'NotificationTopicArn', 'EventBusName']) {
      expect(outputs.some((id) => id.startsWith('Harvester') && id.includes(name))).toBe(true);
    }
  });

  it('lets the stack wire its parts: the example grants a role of its own read access to the items', () => {
    const policies = JSON.stringify(template.findResources('AWS::IAM::Policy'));
    expect(policies).toContain('AnalyticsReader');
  });
});
