import { CfnOutput, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { AdminApi } from './constructs/admin-api.js';
import { ChangeFeed } from './constructs/change-feed.js';
import { ConfigMacKey } from './constructs/config-mac-key.js';
import { DataTables } from './constructs/data-tables.js';
import { Messaging } from './constructs/messaging.js';
import { Notifications } from './constructs/notifications.js';
import { Observability } from './constructs/observability.js';
import { PagePipeline } from './constructs/page-pipeline.js';
import { Scheduling } from './constructs/scheduling.js';
import { grantSourceBuckets } from './constructs/source-buckets.js';
import { baseEnvironment } from './runtime-environment.js';
import { type HarvesterSettings, resolveSettings } from './settings.js';

/** Props of {@link Harvester}: any setting left out comes from CDK context, then its default. */
export type HarvesterProps = Partial<HarvesterSettings>;

/**
 * Harvester on AWS, as a construct to add to any stack: tables, the page queue with its DLQ, the
 * page worker, reaper, drain, start-run, API and connection-check functions, Scheduler clocks,
 * the event bus, notifications, alarms, a dashboard and the outputs a deployment needs (`ApiUrl`,
 * `DashboardUrl`…).
 */
export class Harvester extends Construct {
  readonly settings: HarvesterSettings;
  readonly tables: DataTables;
  readonly configMac: ConfigMacKey;
  readonly messaging: Messaging;
  readonly scheduling: Scheduling;
  readonly pipeline: PagePipeline;
  readonly adminApi: AdminApi;
  readonly notifications: Notifications;
  readonly observability: Observability;
  /** The change feed's pipes and enrichment function, when the `changeFeed` setting is on. */
  readonly changeFeed: ChangeFeed | undefined;

  constructor(scope: Construct, id: string, props: HarvesterProps = {}) {
    super(scope, id);
    this.settings = resolveSettings(this, props);
    const { settings } = this;
    const retention = settings.deletionProtection ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY;
    const functions = { tracing: settings.tracing, removalPolicy: retention };

    this.tables = new DataTables(this, 'Tables', {
      deletionProtection: settings.deletionProtection,
      itemsStream: settings.changeFeed,
      itemsPointInTimeRecovery: settings.itemsPointInTimeRecovery,
    });
    this.messaging = new Messaging(this, 'Messaging');
    this.configMac = new ConfigMacKey(this, 'ConfigMac', { removalPolicy: retention });
    const environment = (scheduleGroupName: string) =>
      baseEnvironment({
        tables: this.tables,
        messaging: this.messaging,
        scheduleGroupName,
        settings,
        configMacKeyArn: this.configMac.key.keyArn,
      });

    this.scheduling = new Scheduling(this, 'Scheduling', {
      ...functions,
      tables: this.tables,
      messaging: this.messaging,
      environment,
    });
    const shared = {
      ...functions,
      tables: this.tables,
      messaging: this.messaging,
      scheduling: this.scheduling,
      environment: environment(this.scheduling.group.scheduleGroupName),
    };
    this.pipeline = new PagePipeline(this, 'Pipeline', {
      ...shared,
      workerMaxConcurrency: settings.workerMaxConcurrency,
      sharedSecretRefs: Object.keys(settings.sharedSecretRefs),
      sourceBuckets: settings.sourceBuckets,
    });
    this.adminApi = new AdminApi(this, 'Api', {
      ...shared,
      sharedSecretRefs: Object.keys(settings.sharedSecretRefs),
    });
    // The API signs configs and bindings; the page worker and the check function, which resolve
    // secrets, only verify.
    this.configMac.grantSign(this.adminApi.handler.role);
    this.configMac.grantVerify(this.pipeline.worker.role);
    this.configMac.grantVerify(this.adminApi.sourceCheck.role);
    // An s3-objects source's check lists its bucket as its first page would.
    grantSourceBuckets(this.adminApi.sourceCheck, settings.sourceBuckets);
    this.changeFeed = settings.changeFeed
      ? new ChangeFeed(this, 'ChangeFeed', {
          ...functions,
          items: this.tables.items,
          bus: this.messaging.bus,
          includeData: settings.changeFeedIncludesData,
        })
      : undefined;

    this.notifications = new Notifications(this, 'Notifications', {
      bus: this.messaging.bus,
      keyRemovalPolicy: retention,
    });
    this.observability = new Observability(this, 'Observability', {
      topic: this.notifications.topic,
      pageQueue: this.messaging.pageQueue,
      pageDlq: this.messaging.pageDlq,
      worker: this.pipeline.worker.fn,
      reaper: this.scheduling.reaper.fn,
      drain: this.pipeline.drain.fn,
      startRunDlq: this.scheduling.startRunDlq,
      api: this.adminApi.api,
      logGroups: [
        this.pipeline.worker.logGroup,
        this.pipeline.drain.logGroup,
        this.scheduling.reaper.logGroup,
        this.scheduling.startRun.logGroup,
        this.adminApi.handler.logGroup,
        this.adminApi.sourceCheck.logGroup,
      ],
      ...(this.changeFeed ? { changeFeedDlqs: this.changeFeed.deadLetterQueues } : {}),
    });

    this.outputs();
  }

  private outputs(): void {
    const out = (id: string, value: string, description: string): void => {
      new CfnOutput(this, id, { value, description });
    };
    out('ApiUrl', this.adminApi.url, 'Admin API base URL (SigV4 / IAM-authorized)');
    out('SyncRunsTableName', this.tables.syncRuns.tableName, 'SYNC_RUNS_TABLE');
    out('SourcesTableName', this.tables.sources.tableName, 'SOURCES_TABLE');
    out('DeadLettersTableName', this.tables.deadLetters.tableName, 'DEAD_LETTERS_TABLE');
    out('ItemsTableName', this.tables.items.tableName, 'ITEMS_TABLE');
    out('RateBudgetsTableName', this.tables.rateBudgets.tableName, 'RATE_BUDGETS_TABLE');
    out('PageQueueUrl', this.messaging.pageQueue.queueUrl, 'PAGE_QUEUE_URL');
    out('PageDlqUrl', this.messaging.pageDlq.queueUrl, 'PAGE_DLQ_URL');
    out('StartRunDlqUrl', this.scheduling.startRunDlq.queueUrl, 'Scheduled starts that failed');
    out('EventBusName', this.messaging.bus.eventBusName, 'EVENT_BUS_NAME');
    out('ScheduleGroupName', this.scheduling.group.scheduleGroupName, 'SCHEDULE_GROUP');
    out('NotificationTopicArn', this.notifications.topic.topicArn, 'Run-outcome and alarm notifications');
    out(
      'DashboardUrl',
      `https://console.aws.amazon.com/cloudwatch/home?region=${Stack.of(this).region}#dashboards:name=${this.observability.dashboard.dashboardName}`,
      'CloudWatch dashboard: runs, pages, dead letters, queue age, API errors',
    );
  }
}
