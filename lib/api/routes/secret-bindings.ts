import { bindingSetProblems } from '../binding-guard.js';
import { SourcePolicyError } from '../errors.js';
import { defineRoute, type Route } from '../route.js';
import { PutSecretBindingsBodySchema, SecretBindingsViewSchema } from '../schemas/secret-bindings.js';
import { SourcePathSchema } from '../schemas/sources.js';

/**
 * Secret bindings: where a source's own secrets may be sent. A route of its own (not under
 * `/sources/…`), so an IAM policy can let a role edit sources (`PUT/sources/*`) and still deny it
 * `PUT/secret-bindings/*`: editing a source and sending its secret somewhere new are different
 * permissions.
 */
export const secretBindingRoutes: Route[] = [
  defineRoute({
    method: 'PUT',
    path: '/secret-bindings/{sourceId}',
    operationId: 'putSecretBindings',
    summary: "Bind a source's secrets to the origins they may be sent to",
    description:
      "Replaces the source's bindings as a whole. Each reference must be one of the source's own (`harvester/<sourceId>/…`; shared secrets are bound by the stack setting `sharedSecretRefs`), each origin `https://host[:port]` (http only to loopback in a local stack) that the stack's source posture accepts. Workers send a secret only to its bound origins, checked on every request. The source need not exist yet.",
    tag: 'secret-bindings',
    params: SourcePathSchema,
    body: PutSecretBindingsBodySchema,
    responses: { 200: { description: 'The bindings now in force', schema: SecretBindingsViewSchema } },
    problems: [],
    async handle({ params, body, deps }) {
      const bindings = Object.fromEntries(
        Object.entries(body.bindings).map(([ref, origins]) => [
          ref,
          [...new Set(origins.map((o) => o.replace(/\/$/, '').toLowerCase()))],
        ]),
      );
      const problems = await bindingSetProblems(deps, params.sourceId, bindings);
      if (problems.length > 0) throw new SourcePolicyError(problems);
      const mac = await deps.trust.signBindings(params.sourceId, bindings);
      const record = await deps.secretBindings.put(params.sourceId, bindings, mac, deps.clock.now());
      deps.logger.info('secret bindings replaced', {
        sourceId: params.sourceId,
        references: Object.keys(bindings),
      });
      return {
        status: 200,
        body: { sourceId: record.sourceId, bindings, updatedAt: new Date(record.updatedAt).toISOString() },
      };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/secret-bindings/{sourceId}',
    operationId: 'getSecretBindings',
    summary: "A source's secret bindings",
    tag: 'secret-bindings',
    params: SourcePathSchema,
    responses: { 200: { description: 'The bindings (empty when none)', schema: SecretBindingsViewSchema } },
    problems: [],
    async handle({ params, deps }) {
      const record = await deps.secretBindings.get(params.sourceId);
      return {
        status: 200,
        body: {
          sourceId: params.sourceId,
          bindings: record?.bindings ?? {},
          updatedAt: record ? new Date(record.updatedAt).toISOString() : null,
        },
      };
    },
  }),
];
