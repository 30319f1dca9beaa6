import { type Stage, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks, type NagPackProps } from 'cdk-nag';

/**
 * Opt-in cdk-nag checks, exported apart from the construct (`harvester/nag`) so that an app that
 * does not use cdk-nag never loads it (it is an optional peer dependency). Registers the
 * AwsSolutions pack on an app or stage: cdk-nag 3 is a CDK policy-validation plugin rather than an
 * Aspect, and an unacknowledged finding on any stack of the stage fails `cdk synth`. The Harvester
 * construct acknowledges, each with its reason, the findings it means to have (`Validations.of(…)
 * .acknowledge`, part of aws-cdk-lib), so a stage holding only Harvester passes; findings of the
 * app's own resources are the app's to fix or acknowledge.
 */
export function addHarvesterChecks(stage: Stage, props?: NagPackProps): AwsSolutionsChecks {
  const checks = new AwsSolutionsChecks(stage, props);
  Validations.of(stage).addPlugins(checks);
  return checks;
}
