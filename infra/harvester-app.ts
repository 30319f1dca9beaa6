import { type App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { HarvesterStack, type HarvesterStackProps } from './stack.js';

/** Construct id (and default CloudFormation name) of the stack. */
export const STACK_ID = 'HarvesterStack';

/**
 * Adds the Harvester stack to an app and registers the cdk-nag AwsSolutions checks. cdk-nag 3 is a
 * CDK policy-validation plugin (it no longer runs as an Aspect): any unacknowledged finding fails
 * `cdk synth`. Shared by infra/app.ts and the stack tests, so both check the same thing.
 */
export function addHarvester(app: App, props: HarvesterStackProps = {}): HarvesterStack {
  const stack = new HarvesterStack(app, STACK_ID, {
    description: 'Harvester: pulls entities from external sources into DynamoDB',
    ...props,
  });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  return stack;
}
