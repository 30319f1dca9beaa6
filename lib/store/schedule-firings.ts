import { randomUUID } from 'node:crypto';
import { type DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { isConditionFailure } from './errors.js';

/** The source item's attribute holding the last scheduled time a schedule fired for. */
function firingAttribute(schedule: string): string {
  return `firedAt:${schedule}`;
}

/** The attribute holding the token of the delivery that recorded that firing. */
function recorderAttribute(schedule: string): string {
  return `firedBy:${schedule}`;
}

/** What {@link ScheduleFirings.record} made of one delivery of a schedule's firing. */
export type FiringRecord =
  | { readonly outcome: 'recorded'; readonly previous: number | undefined }
  | { readonly outcome: 'duplicate'; readonly last: number }
  | { readonly outcome: 'source_not_found' };

/**
 * The last firing of each source schedule, on the source's item in the Sources table: the one
 * record that tells a second delivery of a firing from the next firing.
 */
export class ScheduleFirings {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  /**
   * Records that a source schedule fired for `scheduledAt` (epoch ms), accepting only a firing
   * newer than the last one recorded: Scheduler delivers at least once, so the same firing may
   * arrive again, even after its run ended, and must be told apart from the next one. Kept on the
   * source item (one attribute per schedule) so it goes with the source and needs no table.
   * `previous` is what {@link ScheduleFirings.forget} puts back.
   */
  async record(sourceId: string, schedule: string, scheduledAt: number): Promise<FiringRecord> {
    const attribute = firingAttribute(schedule);
    const token = randomUUID();
    try {
      const { Attributes } = await this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { sourceId },
          UpdateExpression: 'SET #fired = :at, #by = :token',
          // Strictly newer: the same scheduled time again is the duplicate delivery.
          ConditionExpression:
            'attribute_exists(sourceId) AND (attribute_not_exists(#fired) OR #fired < :at)',
          ExpressionAttributeNames: { '#fired': attribute, '#by': recorderAttribute(schedule) },
          ExpressionAttributeValues: { ':at': scheduledAt, ':token': token },
          ReturnValues: 'UPDATED_OLD',
        }),
      );
      const previous = Attributes?.[attribute];
      return { outcome: 'recorded', previous: typeof previous === 'number' ? previous : undefined };
    } catch (error) {
      const refused = isConditionFailure(error);
      // DynamoDB may apply the write and lose its answer (a 500): the SDK's second send is then
      // refused by this very firing, or the 500 comes through. The item tells.
      const { Item } = await this.doc
        .send(new GetCommand({ TableName: this.tableName, Key: { sourceId }, ConsistentRead: true }))
        .catch((readError: unknown) => {
          throw refused ? readError : error;
        });
      if (Item?.[recorderAttribute(schedule)] === token) {
        // Its answer, with the time it replaced, was lost: undone, the firing leaves no time behind.
        return { outcome: 'recorded', previous: undefined };
      }
      if (!refused) throw error;
      if (!Item) return { outcome: 'source_not_found' };
      return { outcome: 'duplicate', last: Number(Item[attribute]) };
    }
  }

  /**
   * Undoes {@link ScheduleFirings.record} when the start it guarded failed, so Scheduler's retry
   * of that firing is not taken for a duplicate. Only while the firing is still the last one.
   */
  async forget(sourceId: string, schedule: string, scheduledAt: number, previous?: number): Promise<void> {
    try {
      await this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { sourceId },
          UpdateExpression: previous === undefined ? 'REMOVE #fired' : 'SET #fired = :previous',
          ConditionExpression: '#fired = :at',
          ExpressionAttributeNames: { '#fired': firingAttribute(schedule) },
          ExpressionAttributeValues: {
            ':at': scheduledAt,
            ...(previous === undefined ? {} : { ':previous': previous }),
          },
        }),
      );
    } catch (error) {
      // A newer firing was recorded meanwhile: that one stands.
      if (!isConditionFailure(error)) throw error;
    }
  }
}
