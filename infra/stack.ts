import { Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { Harvester, type HarvesterProps } from './harvester.js';

/**
 * Props of {@link HarvesterStack}: stack props and the construct's. Unlike the bare construct, the
 * stack adds its outputs unless told not to (`outputs: false`).
 */
export interface HarvesterStackProps extends StackProps, HarvesterProps {}

/**
 * The stack `cdk deploy` creates: one {@link Harvester}. It is added under the id `Default`, which
 * CDK leaves out of logical ids, so the resources keep the ids they had when the stack held them
 * directly and an existing deployment updates in place; its outputs have unprefixed ids (`ApiUrl`).
 */
export class HarvesterStack extends Stack {
  readonly harvester: Harvester;

  constructor(scope: Construct, id: string, props: HarvesterStackProps = {}) {
    super(scope, id, props);
    this.harvester = new Harvester(this, 'Default', { outputs: true, ...props });
  }
}
