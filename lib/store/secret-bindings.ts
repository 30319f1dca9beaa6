import { type DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';

/**
 * Where a source's own secrets may be sent: one record per source, in the Sources table under the
 * key `binding#<sourceId>` (source ids cannot contain `#`, so it never collides with a source),
 * mapping each secret reference to its origins. Only the admin route `PUT /secret-bindings/{id}`
 * writes it, and only the API role may write the Sources table at all, so "may edit a source" and
 * "may send its secret somewhere new" stay separate permissions. The record carries the API's MAC
 * over its content, which the workers verify before they trust it.
 */

/** Prefix of a binding record's key in the Sources table. */
export const BINDING_KEY_PREFIX = 'binding#';

/** The Sources-table key of `sourceId`'s binding record. */
export function bindingKey(sourceId: string): string {
  return `${BINDING_KEY_PREFIX}${sourceId}`;
}

/** Secret reference → the origins it may be sent to. */
export type SecretBindingMap = Readonly<Record<string, readonly string[]>>;

/** A source's binding record. */
export interface SecretBindingRecord {
  readonly sourceId: string;
  readonly bindings: SecretBindingMap;
  /** The API's MAC over `sourceId` + `bindings` (see lib/engine/sources/config-trust.ts); absent on unsigned rows. */
  readonly mac: string | null;
  readonly updatedAt: number;
}

/** The binding records (a few attributes on their own key of the Sources table). */
export class SecretBindingStore {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    readonly tableName: string,
  ) {}

  async get(sourceId: string): Promise<SecretBindingRecord | undefined> {
    const { Item } = await this.doc.send(
      new GetCommand({
        TableName: this.tableName,
        Key: { sourceId: bindingKey(sourceId) },
        ConsistentRead: true,
      }),
    );
    if (!Item) return undefined;
    return {
      sourceId,
      bindings: (Item.bindings ?? {}) as SecretBindingMap,
      mac: typeof Item.mac === 'string' ? Item.mac : null,
      updatedAt: Item.updatedAt as number,
    };
  }

  /** Replaces the source's bindings as a whole. */
  async put(
    sourceId: string,
    bindings: SecretBindingMap,
    mac: string,
    now: number,
  ): Promise<SecretBindingRecord> {
    await this.doc.send(
      new PutCommand({
        TableName: this.tableName,
        Item: { sourceId: bindingKey(sourceId), kind: 'secret-binding', bindings, mac, updatedAt: now },
      }),
    );
    return { sourceId, bindings, mac, updatedAt: now };
  }
}
