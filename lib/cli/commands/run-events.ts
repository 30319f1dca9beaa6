import type { Command } from 'commander';
import type { RunEvent } from '../../run/run-events.js';
import { contextOf } from '../context.js';
import { examples } from '../help.js';
import { type Io, printJson, printLines, printTable } from '../output.js';
import { runPath } from '../watch.js';

/** A page of a run's story as the API answers it. */
interface RunEventPage {
  readonly items: RunEvent[];
  readonly nextCursor: string | null;
  readonly dropped: number;
}

function chainName(partition: number | null): string {
  return partition === null ? 'the run' : `partition ${partition}`;
}

/** One event in words: what happened, with its figures. */
export function eventSentence(event: RunEvent): string {
  switch (event.type) {
    case 'started':
      return `${event.detail.mode} run started (${event.detail.trigger}; ${event.detail.verdict})`;
    case 'pages':
      return `${chainName(event.detail.partition)} committed through page ${event.detail.throughPage} (${event.detail.pages} pages since the last such event); ${event.detail.processed} processed`;
    case 'deferred':
      return `page ${event.detail.page} of ${chainName(event.detail.partition)} deferred until ${event.detail.until}: ${event.detail.reason}`;
    case 'waiting':
      return `its page has waited in the queue since ${event.detail.since}${event.detail.resent ? '; sent once more' : ''} (waiting, not crashed)`;
    case 'resumed':
      return `resumed from ${event.detail.from} (${event.detail.verdict}); epoch ${event.detail.previousEpoch} → ${event.epoch}`;
    case 'partition_planned':
      return `split into ${event.detail.partitions} partitions${event.detail.total === null ? '' : ` (~${event.detail.total} entities)`}`;
    case 'partition_ended':
      return event.detail.state === 'idle'
        ? `partition ${event.detail.partition} reached the end after ${event.detail.pages} pages; reads its tail once the others are done`
        : `partition ${event.detail.partition} done after ${event.detail.pages} pages`;
    case 'cancelled':
      return `cancelled${event.detail.by ? ` by ${event.detail.by}` : ''}`;
    case 'ended': {
      const d = event.detail;
      const total = d.total === null || d.total === d.processed ? '' : `/${d.total}`;
      const failure = d.failure ? ` (${d.failure})` : '';
      return `${d.state}${failure}: ${d.processed}${total} processed, ${d.deadLetters} dead ${d.deadLetters === 1 ? 'letter' : 'letters'} filed`;
    }
  }
}

/** `harvester runs events <sourceId> <runId>`: a run's story, oldest first, every page of it. */
export function registerRunEventsCommand(runs: Command, io: Io): void {
  runs
    .command('events <sourceId> <runId>')
    .addHelpText(
      'after',
      examples(
        'runs events acme 01JD5W9Q3R8V2K7T6Y4X1Z0ABC',
        'runs events acme 01JD5W9Q3R8V2K7T6Y4X1Z0ABC --json',
      ),
    )
    .description(
      "show a run's story, oldest first: started, pages (every 10th), deferred, waiting, resumed, partitions, cancelled, ended",
    )
    .action(async (sourceId: string, runId: string, _opts: unknown, cmd: Command) => {
      const ctx = contextOf(cmd, io);
      const client = await ctx.client();
      const items: RunEvent[] = [];
      let dropped = 0;
      let cursor: string | undefined;
      do {
        const page: RunEventPage = await client.get<RunEventPage>(`${runPath(sourceId, runId)}/events`, {
          limit: 100,
          cursor,
        });
        items.push(...page.items);
        dropped = page.dropped;
        cursor = page.nextCursor ?? undefined;
      } while (cursor);
      if (ctx.json) return printJson(io, { items, nextCursor: null, dropped });
      printTable(
        io,
        ['SEQ', 'AT', 'EPOCH', 'EVENT', 'WHAT'],
        items.map((e) => [String(e.seq), e.at, String(e.epoch), e.type, eventSentence(e)]),
        'no events recorded (a run that started before runs kept their story has none)',
      );
      if (dropped > 0)
        printLines(io, [
          `${dropped} more events found no room: a run keeps at most 500, the last for its end`,
        ]);
    });
}
