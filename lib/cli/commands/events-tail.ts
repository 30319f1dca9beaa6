/**
 * `harvester events tail`'s work, loaded only when the command runs: it needs the EventBridge and
 * SQS clients, which every other command (and `--help`) would otherwise parse at start-up.
 */
import { randomBytes } from 'node:crypto';
import {
  DeleteRuleCommand,
  PutRuleCommand,
  PutTargetsCommand,
  RemoveTargetsCommand,
} from '@aws-sdk/client-eventbridge';
import {
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SetQueueAttributesCommand,
} from '@aws-sdk/client-sqs';
import { type AwsClients, createAwsClients, destroyAwsClients } from '../../aws/clients.js';
import { loadConfig } from '../../config/env.js';
import { EVENT_SOURCE } from '../../events/details.js';
import type { Io } from '../output.js';

interface BusEvent {
  readonly 'detail-type': string;
  readonly time: string;
  readonly detail: Record<string, unknown>;
}

/** One readable line per event: time, type, and what it is about. */
export function eventLine(event: BusEvent): string {
  const d = event.detail;
  const about =
    typeof d.entityId === 'string'
      ? `${d.sourceId}/${d.entityId} version ${d.version} (run ${d.runId})`
      : `${d.sourceId} run ${d.runId}: ${d.summary ?? d.state}`;
  return `${event.time} ${event['detail-type'].padEnd(29)} ${about}`;
}

/**
 * A temporary subscription to the Harvester bus: a queue, and a rule that sends it Harvester's
 * events (of one detail type, if given). Removed by {@link Subscription.close}.
 */
interface Subscription {
  readonly queueUrl: string;
  close(): Promise<void>;
}

async function subscribe(
  clients: AwsClients,
  bus: string,
  detailType: string | undefined,
): Promise<Subscription> {
  const name = `harvester-tail-${randomBytes(4).toString('hex')}`;
  const { QueueUrl } = await clients.sqs.send(new CreateQueueCommand({ QueueName: name }));
  const queueUrl = QueueUrl!;
  const { Attributes } = await clients.sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }),
  );
  const pattern = { source: [EVENT_SOURCE], ...(detailType ? { 'detail-type': [detailType] } : {}) };
  const rule = await clients.events.send(
    new PutRuleCommand({ Name: name, EventBusName: bus, EventPattern: JSON.stringify(pattern) }),
  );
  // On AWS the queue must also let this rule send to it (a queue policy naming rule.RuleArn).
  await clients.sqs.send(
    new SetQueueAttributesCommand({
      QueueUrl: queueUrl,
      Attributes: {
        Policy: JSON.stringify({
          Version: '2012-10-17',
          Statement: [
            {
              Effect: 'Allow',
              Principal: { Service: 'events.amazonaws.com' },
              Action: 'sqs:SendMessage',
              Resource: Attributes!.QueueArn,
              Condition: { ArnEquals: { 'aws:SourceArn': rule.RuleArn } },
            },
          ],
        }),
      },
    }),
  );
  await clients.events.send(
    new PutTargetsCommand({
      Rule: name,
      EventBusName: bus,
      Targets: [{ Id: 'tail', Arn: Attributes!.QueueArn! }],
    }),
  );
  return {
    queueUrl,
    async close() {
      await clients.events.send(new RemoveTargetsCommand({ Rule: name, EventBusName: bus, Ids: ['tail'] }));
      await clients.events.send(new DeleteRuleCommand({ Name: name, EventBusName: bus }));
      await clients.sqs.send(new DeleteQueueCommand({ QueueUrl: queueUrl }));
    },
  };
}

/** Subscribes to the Harvester bus and prints its events until Ctrl-C (or for `opts.for` seconds). */
export async function tailEvents(
  io: Io,
  opts: { type?: string; for?: number },
  json: boolean,
): Promise<void> {
  const config = loadConfig();
  const clients = createAwsClients({
    region: config.region,
    endpoints: config.endpoints,
    local: config.local,
  });
  const subscription = await subscribe(clients, config.names.eventBus, opts.type);
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  if (opts.for !== undefined) setTimeout(onSignal, opts.for * 1_000).unref();
  if (!json)
    io.err.write(
      `listening on ${config.names.eventBus}${opts.type ? ` for ${opts.type}` : ''} (Ctrl-C to stop)\n`,
    );
  try {
    while (!stop.signal.aborted) {
      const { Messages = [] } = await clients.sqs
        .send(
          new ReceiveMessageCommand({
            QueueUrl: subscription.queueUrl,
            WaitTimeSeconds: 2,
            MaxNumberOfMessages: 10,
          }),
          { abortSignal: stop.signal },
        )
        .catch((error: unknown) => {
          if (stop.signal.aborted) return { Messages: [] };
          throw error;
        });
      for (const message of Messages) {
        const event = JSON.parse(message.Body!) as BusEvent;
        io.out.write(`${json ? JSON.stringify(event) : eventLine(event)}\n`);
      }
      if (Messages.length > 0)
        await clients.sqs.send(
          new DeleteMessageBatchCommand({
            QueueUrl: subscription.queueUrl,
            Entries: Messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle! })),
          }),
        );
    }
  } finally {
    process.removeListener('SIGINT', onSignal);
    await subscription.close();
    destroyAwsClients(clients);
  }
}
