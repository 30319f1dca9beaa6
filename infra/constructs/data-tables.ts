import { RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { type KeyAttribute, TABLES, type TableDefinition } from '../../lib/resources/definitions.js';
import { BINDING_KEY_PREFIX } from '../../lib/store/secret-bindings.js';

/** Item reads (transactions check conditions with `ConditionCheckItem`). */
const ITEM_READS = [
  'dynamodb:BatchGetItem',
  'dynamodb:ConditionCheckItem',
  'dynamodb:GetItem',
  'dynamodb:Query',
  'dynamodb:Scan',
];
const ITEM_WRITES = [
  'dynamodb:BatchWriteItem',
  'dynamodb:DeleteItem',
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
];

/** Props of {@link DataTables}. */
export interface DataTablesProps {
  /** Deletion protection on every table; protected tables are also RETAINed when the stack goes. */
  readonly deletionProtection: boolean;
  /** A stream of new images on the Items table, which the change feed reads. Default off. */
  readonly itemsStream?: boolean;
  /** Point-in-time recovery on the Items table (export to S3 needs it). Default on. */
  readonly itemsPointInTimeRecovery?: boolean;
}

/** Which table of {@link TABLES}. */
export type TableKey = keyof typeof TABLES;

function attribute(key: KeyAttribute): dynamodb.Attribute {
  return {
    name: key.name,
    type: key.type === 'S' ? dynamodb.AttributeType.STRING : dynamodb.AttributeType.NUMBER,
  };
}

/**
 * The Harvester tables, built from `TABLES` in lib/resources/definitions.ts — the
 * same definitions the local emulator bootstrap creates, so keys and indexes cannot drift apart.
 *
 * Every table is on-demand (harvest load is bursty and unpredictable), has point-in-time recovery
 * (SyncRuns and dead_letters are the durable record of what happened) and AWS-managed KMS
 * encryption. Logical ids come from the `TABLES` keys, so reordering definitions never replaces a table.
 */
export class DataTables extends Construct {
  readonly syncRuns: dynamodb.Table;
  readonly sources: dynamodb.Table;
  readonly deadLetters: dynamodb.Table;
  readonly items: dynamodb.Table;
  readonly rateBudgets: dynamodb.Table;

  constructor(scope: Construct, id: string, props: DataTablesProps) {
    super(scope, id);
    const make = (key: TableKey): dynamodb.Table => this.table(key, TABLES[key], props);
    this.syncRuns = make('syncRuns');
    this.sources = make('sources');
    this.deadLetters = make('deadLetters');
    this.items = make('items');
    this.rateBudgets = make('rateBudgets');
  }

  /** All tables, keyed like {@link TABLES}. */
  get all(): Record<TableKey, dynamodb.Table> {
    return {
      syncRuns: this.syncRuns,
      sources: this.sources,
      deadLetters: this.deadLetters,
      items: this.items,
      rateBudgets: this.rateBudgets,
    };
  }

  /**
   * Grants item-level data access: the item reads and writes the code sends, no table management,
   * no stream reads (`GetRecords` / `GetShardIterator`: no function consumes a table stream), no
   * wildcard actions. On a table with GSIs the grant necessarily covers `<table>/index/*`, which
   * is acknowledged here, where the grant is made.
   */
  grantData(role: iam.Role, key: TableKey, access: 'read' | 'readWrite'): void {
    const table = this.all[key];
    table.grant(role, ...(access === 'read' ? ITEM_READS : [...ITEM_READS, ...ITEM_WRITES]));
    const def: TableDefinition = TABLES[key];
    if (def.indexes.length === 0) return;
    const logicalId = Stack.of(this).getLogicalId(table.node.defaultChild as dynamodb.CfnTable);
    Validations.of(role).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${logicalId}.Arn>/index/*]`,
      reason:
        `Queries on the ${key} table's GSIs (${def.indexes.map((i) => i.indexName).join(', ')}) need ` +
        'index ARNs; "index/*" is scoped to this one table and carries the same data actions.',
    });
  }

  /**
   * The Sources table as a function other than the API uses it: it reads rows (`GetItem`) and
   * updates only the run lock and, with `watermark`, the committed watermark — never a config, a
   * MAC or a secret binding, never a whole item, never a delete or a scan. The attribute condition
   * is what IAM can enforce per attribute; the key condition keeps it off the binding records.
   * So only the API role can change where a source points or where its secret may go.
   */
  grantSourceLock(role: iam.Role, options: { watermark: boolean }): void {
    const attributes = [
      'sourceId',
      'activeRunId',
      'lockedAt',
      ...(options.watermark ? ['watermark', 'watermarkStream'] : []),
    ];
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({ actions: ['dynamodb:GetItem'], resources: [this.sources.tableArn] }),
    );
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['dynamodb:UpdateItem'],
        resources: [this.sources.tableArn],
        conditions: {
          'ForAllValues:StringEquals': { 'dynamodb:Attributes': attributes },
          'ForAllValues:StringNotLike': { 'dynamodb:LeadingKeys': [`${BINDING_KEY_PREFIX}*`] },
        },
      }),
    );
  }

  private table(key: TableKey, def: TableDefinition, props: DataTablesProps): dynamodb.Table {
    const { deletionProtection } = props;
    const items = key === 'items';
    const table = new dynamodb.Table(this, key.charAt(0).toUpperCase() + key.slice(1), {
      partitionKey: attribute(def.partitionKey),
      sortKey: def.sortKey ? attribute(def.sortKey) : undefined,
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: {
        pointInTimeRecoveryEnabled: !items || props.itemsPointInTimeRecovery !== false,
      },
      ...(items && props.itemsStream ? { stream: dynamodb.StreamViewType.NEW_IMAGE } : {}),
      encryption: dynamodb.TableEncryption.AWS_MANAGED,
      deletionProtection,
      timeToLiveAttribute: def.ttlAttribute,
      removalPolicy: deletionProtection ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
    });
    if (items && props.itemsPointInTimeRecovery === false)
      Validations.of(table).acknowledge({
        id: 'AwsSolutions-DDB3',
        reason:
          'Turned off by the itemsPointInTimeRecovery setting: items can be harvested again from their sources; runs and dead letters keep recovery.',
      });
    for (const index of def.indexes) {
      table.addGlobalSecondaryIndex({
        indexName: index.indexName,
        partitionKey: attribute(index.partitionKey),
        sortKey: index.sortKey ? attribute(index.sortKey) : undefined,
        projectionType:
          index.projection === 'KEYS_ONLY' ? dynamodb.ProjectionType.KEYS_ONLY : dynamodb.ProjectionType.ALL,
      });
    }
    return table;
  }
}
