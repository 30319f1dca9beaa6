/**
 * The enrichment of the change feed's EventBridge Pipes: turns the Items table's stream records
 * (already filtered by the pipe to writes that changed or tombstoned an entity) into event details.
 * The pipe puts each returned detail on the Harvester bus. Same builder as the local runtime's
 * feed (lib/events/change-feed.ts), so AWS and a laptop publish the same events.
 */
import { z } from 'zod';
import { entityEventOf, type StreamRecordLike } from '../lib/events/change-feed.js';

// Only this one setting: the function touches no table, queue or secret.
const includeData =
  z.enum(['true', 'false']).default('false').parse(process.env.CHANGE_FEED_INCLUDES_DATA) === 'true';

export const handler = async (records: StreamRecordLike[]): Promise<unknown[]> =>
  records.flatMap((record) => {
    const event = entityEventOf(record, includeData);
    return event ? [event.detail] : [];
  });
