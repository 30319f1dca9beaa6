import type { SecretCarrier } from '../../connectors/contract.js';
import { sameSecret, secretBindingProblem } from '../../connectors/secret-binding.js';
import {
  type BoundSecrets,
  originBoundSecrets,
  type SecretOrigins,
} from '../../connectors/secret-origins.js';
import type { SecretScrubber } from '../../connectors/secret-scrub.js';
import { ClassifiedError } from '../../retry/errors.js';
import type { EngineDeps } from '../deps.js';

/**
 * The secrets of one source, bound to their origins (lib/connectors/secret-origins.ts): a shared
 * secret's origins come from the stack setting, the source's own secrets' from its binding record,
 * which is trusted only when its MAC verifies. Read once per use (a step, a connection check).
 */
export function sourceSecretOrigins(
  deps: Pick<EngineDeps, 'sourcePolicy' | 'secretBindings' | 'trust'>,
  sourceId: string,
): SecretOrigins {
  let record: Promise<Readonly<Record<string, readonly string[]>>> | undefined;
  const ownBindings = async () => {
    const found = await deps.secretBindings.get(sourceId);
    if (!found) return {};
    const problem = await deps.trust.bindingsProblem(sourceId, found.bindings, found.mac);
    if (problem) throw new ClassifiedError('permanent', `secret bindings refused: ${problem}`);
    return found.bindings;
  };
  return {
    async originsFor(reference) {
      // Another source's secret is refused before its origins are even looked up.
      const foreign = secretBindingProblem(reference, sourceId, deps.sourcePolicy.sharedSecrets);
      if (foreign)
        throw new ClassifiedError(
          'permanent',
          `secret reference ${reference} refused for source ${sourceId}: ${foreign}`,
        );
      const shared = Object.entries(deps.sourcePolicy.sharedSecretOrigins).find(([ref]) =>
        sameSecret(ref, reference),
      );
      if (shared) return shared[1];
      record ??= ownBindings();
      const bindings = await record;
      return Object.entries(bindings).find(([ref]) => sameSecret(ref, reference))?.[1];
    },
  };
}

/**
 * The resolver and fetch a connector gets for `sourceId`: references bound to the source
 * (`harvester/<sourceId>/…` or shared), values bound to origins, every request checked.
 */
export function connectorSecrets(
  deps: Pick<EngineDeps, 'sourcePolicy' | 'secretBindings' | 'trust' | 'secretsFor'>,
  sourceId: string,
  fetchFn: typeof fetch,
  /** Collects the values resolved, for the step that stores what the fetch returned. */
  scrubber?: SecretScrubber,
  /** The headers the connector declares its secrets travel in (`Connector.secretCarriers`). */
  carriers?: readonly SecretCarrier[],
): BoundSecrets {
  return originBoundSecrets(deps.secretsFor(sourceId), fetchFn, sourceSecretOrigins(deps, sourceId), {
    allowLoopback: deps.sourcePolicy.allowLoopback,
    sourceId,
    ...(scrubber ? { scrubber } : {}),
    ...(carriers ? { carriers } : {}),
  });
}
