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
import { type HarvesterSettings, settingsFromProps } from './settings.js';

/** Props of {@link Harvester}: the settings (any left out takes its default) and the outputs option. */
export interface HarvesterProps extends Partial<HarvesterSettings> {
  /**
   * Adds the stack outputs a deployment is operated with ({@link HARVESTER_OUTPUTS}: `ApiUrl`,
   * `DashboardUrl`…) to the stack. Default `false`: the construct adds no output, and the stack's
   * own code exports what it needs from the public properties.
   */
  readonly outputs?: boolean;
  /**
   * Prefix of the outputs' logical ids, which are stable: `<prefix>ApiUrl`, `<prefix>DashboardUrl`…
   * Default: the construct's id (`HarvesterApiUrl` for `new Harvester(stack, 'Harvester', …)`), or
   * none when that id is `Default`, as in `HarvesterStack` (`ApiUrl`).
   */
  readonly outputIdPrefix?: string;
}

/** Ids (without prefix) of the outputs `outputs: true` adds, with what each holds. */
export const HARVESTER_OUTPUTS = {
  ApiUrl: 'Admin API base URL (SigV4 / IAM-authorized)',
  SyncRunsTableName: 'SYNC_RUNS_TABLE',
  SourcesTableName: 'SOURCES_TABLE',
  DeadLettersTableName: 'DEAD_LETTERS_TABLE',
  ItemsTableName: 'ITEMS_TABLE',
  RateBudgetsTableName: 'RATE_BUDGETS_TABLE',
  PageQueueUrl: 'PAGE_QUEUE_URL',
  PageDlqUrl: 'PAGE_DLQ_URL',
  StartRunDlqUrl: 'Scheduled starts that failed',
  EventBusName: 'EVENT_BUS_NAME',
  ScheduleGroupName: 'SCHEDULE_GROUP',
  NotificationTopicArn: 'Run-outcome and alarm notifications',
  DashboardUrl: 'CloudWatch dashboard: runs, pages, dead letters, queue age, API errors',
} as const;

/** An output id of {@link HARVESTER_OUTPUTS}. */
export type HarvesterOutput = keyof typeof HARVESTER_OUTPUTS;

/**
 * Harvester on AWS, as a construct to add to any stack: tables, the page queue with its DLQ, the
 * page worker, reaper, drain, start-run, API and connection-check functions, Scheduler clocks,
 * the event bus, notifications, alarms, a dashboard and, when asked for (`outputs: true`), the
 * outputs a deployment needs (`ApiUrl`, `DashboardUrl`…). It reads no CDK context: props only.
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
    this.settings = settingsFromProps(props);
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

    if (props.outputs) this.addOutputs(props.outputIdPrefix ?? (id === 'Default' ? '' : id));
  }

  /** The value of each output, by id. */
  private outputValues(): Record<HarvesterOutput, string> {
    const dashboard = this.observability.dashboard.dashboardName;
    return {
      ApiUrl: this.adminApi.url,
      SyncRunsTableName: this.tables.syncRuns.tableName,
      SourcesTableName: this.tables.sources.tableName,
      DeadLettersTableName: this.tables.deadLetters.tableName,
      ItemsTableName: this.tables.items.tableName,
      RateBudgetsTableName: this.tables.rateBudgets.tableName,
      PageQueueUrl: this.messaging.pageQueue.queueUrl,
      PageDlqUrl: this.messaging.pageDlq.queueUrl,
      StartRunDlqUrl: this.scheduling.startRunDlq.queueUrl,
      EventBusName: this.messaging.bus.eventBusName,
      ScheduleGroupName: this.scheduling.group.scheduleGroupName,
      NotificationTopicArn: this.notifications.topic.topicArn,
      DashboardUrl: `https://console.aws.amazon.com/cloudwatch/home?region=${Stack.of(this).region}#dashboards:name=${dashboard}`,
    };
  }

  /** One output per {@link HARVESTER_OUTPUTS} entry, its logical id fixed to `<prefix><id>`. */
  private addOutputs(prefix: string): void {
    for (const [id, value] of Object.entries(this.outputValues())) {
      const description = HARVESTER_OUTPUTS[id as HarvesterOutput];
      new CfnOutput(this, id, { value, description }).overrideLogicalId(`${prefix}${id}`);
    }
  }
}
