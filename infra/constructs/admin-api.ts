import type { RemovalPolicy } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import * as apigw from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpIamAuthorizer } from 'aws-cdk-lib/aws-apigatewayv2-authorizers';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import type { RuntimeEnvironment } from '../runtime-environment.js';
import { API_THROTTLE, FUNCTION_TIMEOUT_SECONDS } from '../settings.js';
import type { DataTables } from './data-tables.js';
import { HarvesterFunction } from './harvester-function.js';
import type { Messaging } from './messaging.js';
import type { Scheduling } from './scheduling.js';

/** Props of {@link AdminApi}. */
export interface AdminApiProps {
  readonly tables: DataTables;
  readonly messaging: Messaging;
  readonly scheduling: Scheduling;
  readonly environment: RuntimeEnvironment;
  readonly tracing: boolean;
  readonly removalPolicy: RemovalPolicy;
}

/** One JSON object per request: who called (IAM principal), what, and how it ended. */
const ACCESS_LOG_FORMAT = AccessLogFormat.custom(
  JSON.stringify({
    requestId: '$context.requestId',
    requestTime: '$context.requestTime',
    sourceIp: '$context.identity.sourceIp',
    caller: '$context.identity.userArn',
    routeKey: '$context.routeKey',
    path: '$context.path',
    status: '$context.status',
    responseLength: '$context.responseLength',
    latencyMs: '$context.responseLatency',
    integrationError: '$context.integrationErrorMessage',
    authorizerError: '$context.authorizer.error',
  }),
);

/**
 * The admin API (DESIGN §9): one function behind an API Gateway HTTP API. Every route requires IAM
 * (SigV4) authorization — operators and the CLI sign with their own credentials, so there is no
 * user pool or API key to manage. The `$default` stage logs every request as JSON and is throttled.
 */
export class AdminApi extends Construct {
  readonly handler: HarvesterFunction;
  readonly api: apigw.HttpApi;
  readonly stage: apigw.HttpStage;

  constructor(scope: Construct, id: string, props: AdminApiProps) {
    super(scope, id);
    const { tables, messaging, scheduling } = props;

    this.handler = new HarvesterFunction(this, 'Handler', {
      entry: 'api',
      description: 'Harvester admin API: sources, runs, dead letters, OpenAPI',
      environment: {
        ...props.environment,
        SCHEDULER_ROLE_ARN: scheduling.schedulerRole.roleArn,
        START_RUN_TARGET_ARN: scheduling.startRun.fn.functionArn,
      },
      timeoutSeconds: FUNCTION_TIMEOUT_SECONDS.api,
      tracing: props.tracing,
      removalPolicy: props.removalPolicy,
    });
    const role = this.handler.role;
    // Least privilege as used: runs are started and cancelled, sources written, dead letters only
    // listed (workers record and resolve them), items never touched.
    tables.grantData(role, 'syncRuns', 'readWrite');
    tables.grantData(role, 'sources', 'readWrite');
    tables.grantData(role, 'deadLetters', 'read');
    messaging.pageQueue.grantSendMessages(role);
    // Source schedules (recurring start-run) are created, changed, read and removed with the source;
    // cancelling a run lists and deletes its pending deferral schedules.
    scheduling.grantSchedules(this.handler, ['Create', 'Update', 'Delete', 'Get']);
    scheduling.grantListSchedules(this.handler);

    this.api = new apigw.HttpApi(this, 'HttpApi', {
      description: 'Harvester admin API (IAM-authorized)',
      createDefaultStage: false,
      defaultAuthorizer: new HttpIamAuthorizer(),
    });
    const integration = new HttpLambdaIntegration('Lambda', this.handler.fn);
    this.api.addRoutes({ path: '/{proxy+}', methods: [apigw.HttpMethod.ANY], integration });
    this.api.addRoutes({ path: '/openapi.json', methods: [apigw.HttpMethod.GET], integration });

    const accessLogs = new logs.LogGroup(this, 'AccessLogs', {
      retention: logs.RetentionDays.ONE_MONTH,
      removalPolicy: props.removalPolicy,
    });
    this.stage = this.api.addStage('DefaultStage', {
      stageName: '$default',
      autoDeploy: true,
      throttle: API_THROTTLE,
      accessLogSettings: {
        destination: new apigw.LogGroupLogDestination(accessLogs),
        format: ACCESS_LOG_FORMAT,
      },
    });
  }

  /** Invoke URL of the `$default` stage. */
  get url(): string {
    return this.stage.url;
  }
}
