/**
 * The words of a dead letter that the API schemas and the CLI share. Their own file, free of the
 * SDK, so the CLI's start-up does not load the DynamoDB client to learn two lists.
 */

/** What failed: one entity of a page, or a whole page. */
export const DEAD_LETTER_KINDS = ['item', 'page'] as const;
export type DeadLetterKind = (typeof DEAD_LETTER_KINDS)[number];

/** Stored states besides open (open entries carry no state, so older entries read as open). */
export const DEAD_LETTER_STATES = ['discarded'] as const;
export type DeadLetterState = (typeof DEAD_LETTER_STATES)[number];
