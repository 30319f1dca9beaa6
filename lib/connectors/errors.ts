import type { z } from 'zod';

/**
 * The connector layer's own errors: asking for a connector that does not exist, or configuring
 * one wrongly. Both are the administrator's to fix, so both carry what they need to say how.
 */
export class ConnectorError extends Error {
  override readonly name: string = 'ConnectorError';
}

/** No connector registered under that name; `known` lists the names that are. */
export class UnknownConnectorError extends ConnectorError {
  override readonly name = 'UnknownConnectorError';
  constructor(
    readonly connector: string,
    readonly known: readonly string[],
  ) {
    super(`unknown connector "${connector}"; known connectors: ${known.join(', ')}`);
  }
}

/** One problem with a connector config: the field's dot path (`''` for the whole config) and what is wrong. */
export interface ConfigIssue {
  readonly path: string;
  readonly message: string;
}

/**
 * A connector config failed its schema. `issues` carry field paths and messages, which the admin
 * API turns into a 400 `application/problem+json` response.
 */
export class InvalidConnectorConfigError extends ConnectorError {
  override readonly name = 'InvalidConnectorConfigError';
  constructor(
    readonly connector: string,
    readonly issues: readonly ConfigIssue[],
  ) {
    const summary = issues.map((issue) => (issue.path ? `${issue.path}: ${issue.message}` : issue.message));
    super(`invalid ${connector} config: ${summary.join('; ')}`);
  }
}

function dotPath(path: readonly PropertyKey[]): string {
  return path.map((segment) => String(segment)).join('.');
}

/**
 * Zod issues as field-level {@link ConfigIssue}s. An unrecognised key becomes one issue per key,
 * at the key's own path, so a typo (`perpage`) points at itself rather than at its parent object.
 */
export function toConfigIssues(issues: readonly z.core.$ZodIssue[]): ConfigIssue[] {
  return issues.flatMap((issue) => {
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => ({ path: dotPath([...issue.path, key]), message: 'unknown field' }));
    }
    return [{ path: dotPath(issue.path), message: issue.message }];
  });
}

/**
 * Wording for the generic zod messages an administrator meets most; everything else keeps the
 * schema's own message. Passed to `safeParse` as its error map.
 */
export const readableConfigErrors: z.core.$ZodErrorMap = (issue) => {
  if (issue.code === 'invalid_type' && issue.input === undefined) return 'is required';
  if (issue.code === 'invalid_type') return `must be ${article(issue.expected)} ${issue.expected}`;
  return undefined;
};

function article(word: string): string {
  return /^[aeiou]/i.test(word) ? 'an' : 'a';
}
