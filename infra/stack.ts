import { Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { Harvester, type HarvesterProps } from './harvester.js';

/** Props of {@link HarvesterStack}: any setting left out comes from CDK context, then its default. */
export interface HarvesterStackProps extends StackProps, HarvesterProps {}

/**
 * The stack `cdk deploy` creates: one {@link Harvester}. It is added under the id `Default`, which
 * CDK leaves out of logical ids, so the resources keep the ids they had when the stack held them
 * directly and an existing deployment updates in place.
 */
export class HarvesterStack extends Stack {
  readonly harvester: Harvester;

  constructor(scope: Construct, id: string, props: HarvesterStackProps = {}) {
    super(scope, id, props);
    this.harvester = new Harvester(this, 'Default', props);
  }
}
