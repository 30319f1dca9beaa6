import type { ConnectorContext, TimeWindow } from '../connectors/contract.js';
import { readWindow } from '../run/partitions.js';
import { budgetedFetch } from './rate-budget.js';
import { type RequestTrail, recordingFetch } from './request-trail.js';
import type { StepContext } from './step.js';

/**
 * What a connector may use during one step: the guarded HTTP client, the secrets bound to the
 * run's source, the step's abort signal and, for AWS-service sources, the SDK clients. Built in
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
): ConnectorContext {
  const { deps, run, heartbeat } = context;
  const budgeted = budgetedFetch(context);
  return {
    fetch: trail ? recordingFetch(budgeted, trail, () => deps.clock.now()) : budgeted,
    secrets: deps.secretsFor(run.sourceId),
    since,
    signal: heartbeat.signal,
    ...(deps.connectorAws ? { aws: deps.connectorAws } : {}),
    ...(window ? { window } : {}),
  };
}
