import { existsSync } from 'node:fs';
import { dirname, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ArnFormat, Duration, type RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import {
  Architecture,
  type CfnFunction,
  type IDestination,
  type RecursiveLoop,
  Runtime,
  Tracing,
} from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat, SourceMapMode } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { secretLocation } from '../../lib/connectors/secret-binding.js';
import { METRICS_NAMESPACE } from '../../lib/observability/metrics.js';
import { type RuntimeEnvironment, toLambdaEnvironment } from '../runtime-environment.js';
import { SERVICE_NAME } from '../settings.js';

/**
 * Package root, the nearest folder above this file with a package.json: the repository (this file
 * in infra/constructs/) or the installed package (compiled, in dist/cdk/infra/constructs/). The
 * handler sources (functions/, lib/) and tsconfig.json live there, and so, in the repository, does
 * package-lock.json.
 */
export function packageRoot(from: string = fileURLToPath(import.meta.url)): string {
  let dir = dirname(from);
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`harvester: no package.json above ${from}`);
    dir = parent;
  }
  return dir + sep;
}

const REPO_ROOT = packageRoot();

/** The Lambda entry points under `functions/`, one thin file per function. */
export type FunctionEntry =
  | 'page-worker'
  | 'reaper'
  | 'dlq-drain'
  | 'api'
  | 'source-check'
  | 'start-run'
  | 'change-feed';

/**
 * esbuild emits ESM, and a few CommonJS dependencies still call `require` for Node built-ins;
 * this shim gives them one. The alias is unusual on purpose: the banner is pasted verbatim above
 * the bundle, so it must not collide with a top-level name esbuild emits.
 */
const REQUIRE_SHIM =
  "import { createRequire as __harvesterCreateRequire } from 'node:module';" +
  'const require = __harvesterCreateRequire(import.meta.url);';

/** Props of {@link HarvesterFunction}. */
export interface HarvesterFunctionProps {
  /** File under `functions/` without its extension. */
  readonly entry: FunctionEntry;
  readonly description: string;
  readonly timeoutSeconds: number;
  /** Default 256 MB: the handlers are I/O bound. */
  readonly memorySize?: number;
  /** Resource names and settings, as `EnvSchema` in lib/config/env.ts reads them. */
  readonly environment: RuntimeEnvironment;
  readonly tracing: boolean;
  /** Removal policy of the log group, in step with the stack's data protection. */
  readonly removalPolicy: RemovalPolicy;
  /** Lambda's own async retries (Scheduler invocations); default 2 as in Lambda. */
  readonly asyncRetryAttempts?: number;
  readonly recursiveLoop?: RecursiveLoop;
  /** Where an asynchronous invocation goes after Lambda's retries failed (start-run's DLQ). */
  readonly onFailure?: IDestination;
  /** Executions reserved for (and the most allowed to) this function; default: none reserved. */
  readonly reservedConcurrentExecutions?: number;
}

/**
 * One Harvester Lambda: Node.js 22 on arm64, bundled locally by esbuild as ESM with source maps,
 * with an explicit log group (one month) and its own role, which may write only to that log group.
 * The role deliberately does not use AWSLambdaBasicExecutionRole, whose logs permissions cover
 * every log group in the account.
 */
export class HarvesterFunction extends Construct {
  readonly fn: NodejsFunction;
  readonly role: iam.Role;
  readonly logGroup: logs.LogGroup;

  constructor(scope: Construct, id: string, props: HarvesterFunctionProps) {
    super(scope, id);
    this.logGroup = new logs.LogGroup(this, 'Logs', {
      retention: logs.RetentionDays.ONE_MONTH,
      removalPolicy: props.removalPolicy,
    });
    this.role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: `Execution role of the Harvester ${props.entry} function`,
    });
    this.logGroup.grantWrite(this.role);

    this.fn = new NodejsFunction(this, 'Function', {
      entry: `${REPO_ROOT}functions/${props.entry}.ts`,
      handler: 'handler',
      // In this repository, its own lock file and root. Installed as a package (npm leaves lock
      // files out of packages), neither: CDK finds the lock file of the app that uses it, whose
      // folder (holding node_modules/harvester) becomes the project root, and runs that app's
      // esbuild through that app's package manager.
      ...(existsSync(`${REPO_ROOT}package-lock.json`)
        ? { depsLockFilePath: `${REPO_ROOT}package-lock.json`, projectRoot: REPO_ROOT }
        : {}),
      description: props.description,
      runtime: Runtime.NODEJS_22_X,
      architecture: Architecture.ARM_64,
      memorySize: props.memorySize ?? 256,
      timeout: Duration.seconds(props.timeoutSeconds),
      role: this.role,
      logGroup: this.logGroup,
      tracing: props.tracing ? Tracing.ACTIVE : Tracing.DISABLED,
      retryAttempts: props.asyncRetryAttempts,
      recursiveLoop: props.recursiveLoop,
      onFailure: props.onFailure,
      reservedConcurrentExecutions: props.reservedConcurrentExecutions,
      environment: {
        ...toLambdaEnvironment(props.environment),
        POWERTOOLS_SERVICE_NAME: SERVICE_NAME,
        POWERTOOLS_METRICS_NAMESPACE: METRICS_NAMESPACE,
        NODE_OPTIONS: '--enable-source-maps',
      },
      bundling: {
        format: OutputFormat.ESM,
        target: 'node22',
        mainFields: ['module', 'main'],
        banner: REQUIRE_SHIM,
        minify: true,
        // Error classes are told apart by name (`RunFencedError`, …): keep names through minification.
        keepNames: true,
        sourceMap: true,
        // DEFAULT (esbuild "linked") writes `//# sourceMappingURL=index.mjs.map` into the bundle: without that comment
        // `--enable-source-maps` finds no map and stack traces stay minified.
        sourceMapMode: SourceMapMode.DEFAULT,
        sourcesContent: false,
        // Pin the SDK the code was tested with instead of the runtime's moving copy.
        bundleAwsSDK: true,
        forceDockerBundling: false,
      },
    });

    Validations.of(this.fn).acknowledge({
      id: 'AwsSolutions-L1',
      reason:
        'Harvester pins its Lambda functions to nodejs22.x; moving to a newer ' +
        'runtime is a deliberate, tested upgrade, not a side effect of a cdk-lib bump.',
    });
    if (props.tracing) {
      Validations.of(this.role).acknowledge({
        id: 'AwsSolutions-IAM5[Resource::*]',
        reason:
          'Added by Lambda active tracing: xray:PutTraceSegments and xray:PutTelemetryRecords do not ' +
          'support resource-level permissions, so X-Ray requires Resource "*".',
      });
    }
  }

  /**
   * Lets a role (a Scheduler execution role) invoke this function. `grantInvoke` also covers the
   * function's versions and aliases (`<arn>:*`); that finding is acknowledged here, with the grant.
   */
  grantInvokeTo(role: iam.Role): void {
    this.fn.grantInvoke(role);
    const logicalId = Stack.of(this).getLogicalId(this.fn.node.defaultChild as CfnFunction);
    Validations.of(role).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${logicalId}.Arn>:*]`,
      reason:
        `"${this.fn.node.path}:*" names only the versions and aliases of this one function; ` +
        'CDK grants them with the function so that invoking a qualified ARN keeps working.',
    });
  }

  /**
   * Lets the function resolve connector secrets, which sources hold only by reference:
   * SSM parameters and Secrets Manager secrets under `harvester/` (each source may only use its own
   * `harvester/<sourceId>/…`, which the API and the worker enforce; IAM cannot tell sources apart
   * inside one role), plus exactly the stack's shared secrets, wherever they live.
   */
  grantSecretReferences(sharedSecretRefs: readonly string[] = []): void {
    const stack = Stack.of(this);
    for (const [service, pattern] of [
      ['ssm', 'parameter/harvester/*'],
      ['secretsmanager', 'secret:harvester/*'],
    ] as const) {
      Validations.of(this.role).acknowledge({
        id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:${service}:<AWS::Region>:<AWS::AccountId>:${pattern}]`,
        reason:
          'Sources name their credentials by reference, chosen by the operator at runtime; the grant is ' +
          `read-only and confined to the "harvester/" name prefix (${service}); the per-source ` +
          '"harvester/<sourceId>/" binding is enforced by the API and the worker.',
      });
    }
    const shared = sharedSecretRefs.map(secretLocation).filter((l) => !l.name.startsWith('harvester/'));
    const ssmArn = (name: string) =>
      stack.formatArn({ service: 'ssm', resource: 'parameter', resourceName: name });
    const secretArn = (name: string) =>
      stack.formatArn({
        service: 'secretsmanager',
        resource: 'secret',
        resourceName: name,
        arnFormat: ArnFormat.COLON_RESOURCE_NAME,
      });
    this.role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['ssm:GetParameter'],
        resources: [
          ssmArn('harvester/*'),
          ...shared.filter((l) => l.store === 'ssm').map((l) => ssmArn(l.name)),
        ],
      }),
    );
    this.role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['secretsmanager:GetSecretValue'],
        resources: [
          secretArn('harvester/*'),
          // Secrets Manager appends a random 6-character suffix to every secret ARN.
          ...shared.filter((l) => l.store === 'secretsmanager').map((l) => secretArn(`${l.name}-??????`)),
        ],
      }),
    );
  }
}
