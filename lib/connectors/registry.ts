import type { Connector } from './contract.js';
import {
  InvalidConnectorConfigError,
  readableConfigErrors,
  toConfigIssues,
  UnknownConnectorError,
} from './errors.js';
import { githubIssuesConnector } from './github-issues/index.js';
import { gitlabIssuesConnector } from './gitlab-issues/index.js';
import { restJsonConnector } from './rest-json/index.js';
import { s3ObjectsConnector } from './s3-objects/index.js';

export { InvalidConnectorConfigError, UnknownConnectorError } from './errors.js';

/**
 * Every shipped connector by its registry name (the `connector` field of a source). Adding a
 * connector is adding it here; the engine and the admin API only ever go through this map.
 */
export const CONNECTORS = {
  'github-issues': githubIssuesConnector,
  'gitlab-issues': gitlabIssuesConnector,
  'rest-json': restJsonConnector,
  's3-objects': s3ObjectsConnector,
} as const;

/** A registered connector name. */
export type ConnectorName = keyof typeof CONNECTORS;

/** The registered names, for listings, error messages and the OpenAPI enum. */
export const CONNECTOR_NAMES = Object.keys(CONNECTORS) as ConnectorName[];

/** True when `name` is a registered connector. */
export function isConnectorName(name: string): name is ConnectorName {
  return Object.hasOwn(CONNECTORS, name);
}

/**
 * The connector registered as `name`, typed loosely: callers that hold a stored source only know
 * the name at run time and pass the config that {@link parseConnectorConfig} returned.
 *
 * @throws UnknownConnectorError listing the known names.
 */
export function getConnector(name: string): Connector {
  if (!isConnectorName(name)) throw new UnknownConnectorError(name, CONNECTOR_NAMES);
  // Connector methods are declared as methods, hence bivariant in their config parameter; the
  // config is guaranteed to match because it went through this connector's own schema.
  return CONNECTORS[name] as Connector;
}

/**
 * Validates `config` against the named connector's schema and returns it with defaults applied.
 * Run it when a source is created or changed, and again when a run starts (a stored config may
 * predate a schema change).
 *
 * @throws UnknownConnectorError for an unregistered name.
 * @throws InvalidConnectorConfigError whose `issues` name each bad field by dot path
 *   (`pagination.cursorParam`) with a readable message; the admin API answers 400 with them.
 * @example
 * parseConnectorConfig('github-issues', { owner: 'nodejs', repo: 'node' });
 * // { owner: 'nodejs', repo: 'node', baseUrl: 'https://api.github.com', perPage: 100, includePullRequests: true }
 */
export function parseConnectorConfig(name: string, config: unknown): unknown {
  const connector = getConnector(name);
  const result = connector.configSchema.safeParse(config, { error: readableConfigErrors });
  if (!result.success) throw new InvalidConnectorConfigError(name, toConfigIssues(result.error.issues));
  return result.data;
}
