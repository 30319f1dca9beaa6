/**
 * The item a refused conditional write found, when the write asked for it
 * (`ReturnValuesOnConditionCheckFailure: ALL_OLD`): DynamoDB returns it on the error, in the
 * low-level attribute-value shape the document client does not convert. Undefined when the error
 * carries none (the item did not exist, or the write did not ask).
 */
export function refusedItem(error: unknown): Record<string, unknown> | undefined {
  const item = (error as { Item?: Record<string, AttributeValue> } | undefined)?.Item;
  if (!item || typeof item !== 'object' || Object.keys(item).length === 0) return undefined;
  return Object.fromEntries(Object.entries(item).map(([name, value]) => [name, plainValue(value)]));
}

/** One DynamoDB attribute value, in the wire shape (`{ S: … }`, `{ N: … }`, …). */
type AttributeValue = Readonly<Record<string, unknown>>;

/** The attribute value as the document client would read it (numbers as JavaScript numbers). */
function plainValue(value: AttributeValue): unknown {
  if ('S' in value) return value.S;
  if ('N' in value) return Number(value.N);
  if ('BOOL' in value) return value.BOOL;
  if ('NULL' in value) return null;
  if ('M' in value)
    return Object.fromEntries(
      Object.entries(value.M as Record<string, AttributeValue>).map(([k, v]) => [k, plainValue(v)]),
    );
  if ('L' in value) return (value.L as AttributeValue[]).map(plainValue);
  if ('SS' in value) return new Set(value.SS as string[]);
  if ('NS' in value) return new Set((value.NS as string[]).map(Number));
  // Binary values are not part of a chain item; kept as the SDK gave them.
  return value.B ?? value.BS;
}
