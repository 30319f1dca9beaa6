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
export const gitlabIssuesConfigSchema = z
  .strictObject({
    project: z
      .union([z.number().int().positive(), z.string()])
      .transform((value) => String(value))
      .refine(
        (value) => PROJECT.test(value) && value.split('/').every((part) => part !== '.' && part !== '..'),
        'must be a GitLab project id or full path (group/project)',
      )
      .meta({ description: 'The project: its numeric id, or its full path (`group/subgroup/project`).' }),
    baseUrl: z
      .url({ protocol: /^https?$/, error: 'must be an http(s) URL' })
      .default('https://gitlab.com/api/v4')
      .transform((url) => url.replace(/\/+$/, ''))
      .meta({
        description:
          'The REST API root. Default `https://gitlab.com/api/v4`; self-managed GitLab uses `https://HOST/api/v4`. A trailing slash is dropped. Pagination only ever stays on this origin.',
      }),
    tokenRef: z.string().min(1, 'must not be empty').optional().meta({
      description:
        'A secret reference (SSM parameter or Secrets Manager name, under `harvester/<sourceId>/`) holding a personal, project or group access token. Optional: public projects work without one.',
    }),
    authHeader: z.enum(['private-token', 'bearer']).default('private-token').meta({
      description:
        'How the token is sent: `private-token` (`PRIVATE-TOKEN: …`, default) or `bearer` (`Authorization: Bearer …`, OAuth tokens).',
    }),
    perPage: z
      .number()
      .int('must be a whole number')
      .min(1)
      .max(100)
      .default(100)
      .meta({ description: "Issues per page, 1–100 (GitLab's maximum). Default 100." }),
    watermarkLookbackSeconds: watermarkLookbackSeconds.meta({
      description:
        "Seconds before the watermark an incremental run asks from; default the stack's (5), at most 86,400.",
    }),
    limits: sourceLimitsSchema.optional().meta({
      description:
        'What the source may send (see docs/limits.md): body bytes, records a page, next-URL length.',
    }),
  })
  .meta({
    examples: [
      {
        project: 'gitlab-org/gitlab',
        tokenRef: 'ssm:/harvester/gitlab-issues/token',
        authHeader: 'private-token',
      },
    ],
  });

/** The parsed config, defaults applied. */
export type GitlabIssuesConfig = z.output<typeof gitlabIssuesConfigSchema>;

/** The limits in force for a source (records a page: 4 × `perPage` unless configured). */
export function limitsOf(config: GitlabIssuesConfig): SourceLimits {
  return resolveLimits(config.limits, config.perPage);
}
