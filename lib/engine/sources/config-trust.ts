import { createHash } from 'node:crypto';
import type { MacKey } from '../../aws/kms-mac.js';
import { canonicalJson } from '../../run/hash.js';
import type { SecretBindingMap } from '../../store/secret-bindings.js';

/**
 * Configs the workers can trust. The API computes a MAC (KMS `GenerateMac`, a key only the API
 * role may use to generate) over every source config and every secret-binding record it stores;
 * workers hold only `VerifyMac`. A row written by anyone else — a function role with write access
 * to a table, a hand-edited item — carries no valid MAC, and a worker will not resolve a secret
 * for it. The MAC covers the source id, so one source's signed config cannot be replayed on
 * another.
 *
 * The message is a digest of canonical JSON (KMS takes at most 4 KB), prefixed with what it is and
 * a version, so a config MAC can never pass as a binding MAC.
 */

function digest(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value)).digest('hex');
}

/** The message a source config's MAC covers. */
export function sourceConfigMessage(sourceId: string, connector: string, config: unknown): string {
  return `harvester/source-config/v1\n${sourceId}\n${connector}\n${digest(config)}`;
}

/** The message a secret-binding record's MAC covers. */
export function secretBindingMessage(sourceId: string, bindings: SecretBindingMap): string {
  return `harvester/secret-binding/v1\n${sourceId}\n${digest(bindings)}`;
}

/** Signs (API) and verifies (workers) configs and bindings with one MAC key. */
export class ConfigTrust {
  constructor(private readonly key: MacKey) {}

  signConfig(sourceId: string, connector: string, config: unknown): Promise<string> {
    return this.key.generate(sourceConfigMessage(sourceId, connector, config));
  }

  signBindings(sourceId: string, bindings: SecretBindingMap): Promise<string> {
    return this.key.generate(secretBindingMessage(sourceId, bindings));
  }

  /**
   * Why a config may not be trusted (missing or invalid MAC), or undefined when it may.
   *
   * @example
   * await trust.configProblem('acme', 'rest-json', config, row.configMac) // undefined when the API wrote it
   */
  async configProblem(
    sourceId: string,
    connector: string,
    config: unknown,
    mac: string | null | undefined,
  ): Promise<string | undefined> {
    if (!mac)
      return `the config of source ${sourceId} carries no signature (written before configs were signed, or not by the API); save it again through the API`;
    const valid = await this.key.verify(sourceConfigMessage(sourceId, connector, config), mac);
    return valid
      ? undefined
      : `the config of source ${sourceId} does not match its signature: it was changed outside the API`;
  }

  /** Why a binding record may not be trusted, or undefined when it may. */
  async bindingsProblem(
    sourceId: string,
    bindings: SecretBindingMap,
    mac: string | null,
  ): Promise<string | undefined> {
    if (!mac) return `the secret bindings of source ${sourceId} carry no signature`;
    const valid = await this.key.verify(secretBindingMessage(sourceId, bindings), mac);
    return valid ? undefined : `the secret bindings of source ${sourceId} were changed outside the API`;
  }
}
