/**
 * Version of the admin API contract: the OpenAPI document's `info.version`, and what
 * `harvester --version` names beside the CLI's own. A new route or field moves the minor
 * version; a change a caller must adapt to moves the major.
 */
export const API_VERSION = '1.1.0';
