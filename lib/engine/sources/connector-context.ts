import type { ConnectorContext, TimeWindow } from '../../connectors/contract.js';
import { readWindow } from '../../run/partitions.js';
import type { StepContext } from '../step/context.js';
import { connectorSecrets } from './bound-secrets.js';
import { budgetedFetch } from './rate-budget.js';
import { type RequestTrail, recordingFetch } from './request-trail.js';

/**
 * What a connector may use during one step: the guarded HTTP client, the secrets bound to the
 * run's source and to their origins, the step's abort signal and, for AWS-service sources, the SDK clients. Built in
 * one place so every fetch (pages, retried items, reconciliation confirmations) gets the same —
 * including the credential's rate budget, which every request spends (./rate-budget.ts).
 */
export function connectorContext(
  context: StepContext,
  since: string | null,
  /** The window to read (default: the step's partition's, if any). */
  window: TimeWindow | undefined = context.partition ? readWindow(context.partition) : undefined,
  /** Where to note the request that answered (an item's provenance); absent: not noted. */
  trail?: RequestTrail,
  /** The config the connector fetches with (default the step's; a retried dead letter's own). */
  config: unknown = context.config,
): ConnectorContext {
  const { deps, run, heartbeat } = context;
  const budgeted = budgetedFetch(context);
  const recorded = trail ? recordingFetch(budgeted, trail, () => deps.clock.now()) : budgeted;
  // The origin check wraps the rest: a request refused for its secret spends no budget.
  const { secrets, fetch } = connectorSecrets(
    deps,
    run.sourceId,
    recorded,
    context.scrubber,
    context.connector.secretCarriers?.(config),
  );
  return {
    fetch,
    secrets,
    since,
    signal: heartbeat.signal,
    ...(deps.connectorAws ? { aws: deps.connectorAws } : {}),
    ...(window ? { window } : {}),
  };
}
