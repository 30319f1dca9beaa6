import type { App } from 'aws-cdk-lib';
import { addHarvesterChecks } from './nag.js';
import { resolveSettings } from './settings.js';
import { HarvesterStack, type HarvesterStackProps } from './stack.js';

/** Construct id (and default CloudFormation name) of the stack. */
export const STACK_ID = 'HarvesterStack';

/**
 * Adds the Harvester stack to an app, its settings read from CDK context (props win), and registers
 * the cdk-nag AwsSolutions checks ({@link addHarvesterChecks}): any unacknowledged finding fails
 * `cdk synth`. Shared by infra/app.ts and the stack tests, so both check the same thing.
 */
export function addHarvester(app: App, props: HarvesterStackProps = {}): HarvesterStack {
  const stack = new HarvesterStack(app, STACK_ID, {
    description: 'Harvester: pulls entities from external sources into DynamoDB',
    ...props,
    ...resolveSettings(app, props),
  });
  addHarvesterChecks(app);
  return stack;
}
