import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { countAll } from './paging.js';

/**
 * Counts of a source's stored items, for the completeness check at a run's end
 * (lib/run/completeness.ts). A `Select: COUNT` query over the source's partition of the items
 * table: it reads every item of the source once (1 MB a request, capacity as for reading them),
 * once per full or reconciliation run, never per page.
 */
export class ItemCounts {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    readonly tableName: string,
  ) {}

  /** Items of the source that are not tombstoned, read strongly consistent. */
  live(sourceId: string): Promise<number> {
    return countAll(this.doc, {
      TableName: this.tableName,
      KeyConditionExpression: 'sourceId = :sourceId',
      FilterExpression: 'attribute_not_exists(tombstonedAt)',
      ExpressionAttributeValues: { ':sourceId': sourceId },
      ConsistentRead: true,
    });
  }
}
