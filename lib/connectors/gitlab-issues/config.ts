import { z } from 'zod';
import { resolveLimits, type SourceLimits, sourceLimitsSchema } from '../limits.js';
import { watermarkLookbackSeconds } from '../source-timing.js';

// A numeric project id, or a full path `group/subgroup/project` (letters, digits, `_`, `-`, `.`).
const PROJECT = /^(\d+|[A-Za-z0-9_.][A-Za-z0-9_.-]*(\/[A-Za-z0-9_.][A-Za-z0-9_.-]*)+)$/;

/**
 * Config of the `gitlab-issues` connector (validated when a source is created or changed).
 *
 * @example
 * { project: 'gitlab-org/gitlab', tokenRef: 'ssm:/harvester/gitlab/token' }
 * { project: 42, baseUrl: 'https://gitlab.example.com/api/v4', tokenRef: '…', authHeader: 'bearer' }
 */
export const gitlabIssuesConfigSchema = z.strictObject({
  /** The project: its numeric id, or its full path (`group/subgroup/project`). */
  project: z
    .union([z.number().int().positive(), z.string()])
    .transform((value) => String(value))
    .refine(
      (value) => PROJECT.test(value) && value.split('/').every((part) => part !== '.' && part !== '..'),
      'must be a GitLab project id or full path (group/project)',
    ),
  /**
   * The REST API root. Default `https://gitlab.com/api/v4`; self-managed GitLab uses
   * `https://HOST/api/v4`. A trailing slash is dropped. Pagination only ever stays on this origin.
   */
  baseUrl: z
    .url({ protocol: /^https?$/, error: 'must be an http(s) URL' })
    .default('https://gitlab.com/api/v4')
    .transform((url) => url.replace(/\/+$/, '')),
  /**
   * A secret reference (SSM parameter or Secrets Manager name, under `harvester/<sourceId>/`)
   * holding a personal, project or group access token. Optional: public projects work without one.
   */
  tokenRef: z.string().min(1, 'must not be empty').optional(),
  /** How the token is sent: `private-token` (`PRIVATE-TOKEN: …`, default) or `bearer` (`Authorization: Bearer …`, OAuth tokens). */
  authHeader: z.enum(['private-token', 'bearer']).default('private-token'),
  /** Issues per page, 1–100 (GitLab's maximum). Default 100. */
  perPage: z.number().int('must be a whole number').min(1).max(100).default(100),
  /** Seconds before the watermark an incremental run asks from; default the stack's (5), at most 86,400. */
  watermarkLookbackSeconds,
  /** What the source may send (see `../limits.ts`): body bytes, records a page, next-URL length. */
  limits: sourceLimitsSchema.optional(),
});

/** The parsed config, defaults applied. */
export type GitlabIssuesConfig = z.output<typeof gitlabIssuesConfigSchema>;

/** The limits in force for a source (records a page: 4 × `perPage` unless configured). */
export function limitsOf(config: GitlabIssuesConfig): SourceLimits {
  return resolveLimits(config.limits, config.perPage);
}
