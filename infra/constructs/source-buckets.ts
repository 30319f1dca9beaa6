import { Aws, Stack, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type { HarvesterFunction } from './harvester-function.js';

/**
 * Read access for `s3-objects` sources: the page worker may list and read exactly the buckets of
 * the stack setting `sourceBuckets` — `s3:ListBucket` on each bucket, `s3:GetObject` on its
 * objects — and no other bucket. IAM is the enforcement: a source naming another bucket fails its
 * first page with `AccessDenied`, a permanent error that names the setting. Without the setting
 * the worker reads no bucket at all.
 */
export function grantSourceBuckets(worker: HarvesterFunction, buckets: readonly string[]): void {
  if (buckets.length === 0) return;
  const stack = Stack.of(worker);
  const bucketArn = (bucket: string) =>
    stack.formatArn({ service: 's3', region: '', account: '', resource: bucket });
  // Bucket names are global: a bucket of that name in another account (deleted and re-created by
  // someone else) must not be read. s3:ResourceAccount pins every grant to this account.
  const ownAccount = { StringEquals: { 's3:ResourceAccount': Aws.ACCOUNT_ID } };
  worker.role.addToPrincipalPolicy(
    new iam.PolicyStatement({
      actions: ['s3:ListBucket'],
      resources: buckets.map(bucketArn),
      conditions: ownAccount,
    }),
  );
  worker.role.addToPrincipalPolicy(
    new iam.PolicyStatement({
      actions: ['s3:GetObject'],
      resources: buckets.map((bucket) => `${bucketArn(bucket)}/*`),
      conditions: ownAccount,
    }),
  );
  for (const bucket of buckets) {
    Validations.of(worker.role).acknowledge({
      id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:s3:::${bucket}/*]`,
      reason:
        `An s3-objects source harvests every object of bucket "${bucket}" (listed by the operator in ` +
        'the stack setting sourceBuckets); object keys are not known when the stack is deployed. ' +
        'The grant is read-only (s3:GetObject).',
    });
  }
}
