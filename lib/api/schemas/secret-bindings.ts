import { z } from 'zod';
import { IsoTimeSchema, SourceIdSchema } from './common.js';

/** Secret reference → origins, as written and as returned. */
const BindingMapSchema = z.record(
  z.string().min(1).max(512),
  z
    .array(z.string().min(1).max(300))
    .min(1, 'needs at least one origin')
    .max(20)
    .meta({ description: 'Origins (`https://api.example.com`) the secret may be sent to' }),
);

/** Body of `PUT /secret-bindings/{sourceId}`: the source's whole set of bindings. */
export const PutSecretBindingsBodySchema = z
  .strictObject({
    bindings: BindingMapSchema.meta({
      description:
        "The source's own secret references (`ssm:/harvester/<sourceId>/…`, `secretsmanager:harvester/<sourceId>/…`), each with the origins it may be sent to; replaces the current set",
      example: { 'ssm:/harvester/acme/token': ['https://api.acme.example'] },
    }),
  })
  .meta({ id: 'PutSecretBindingsRequest' });

/** A source's secret bindings as the API returns them. */
export const SecretBindingsViewSchema = z
  .object({
    sourceId: SourceIdSchema,
    bindings: BindingMapSchema,
    updatedAt: IsoTimeSchema.nullable().meta({ description: 'Null: never bound' }),
  })
  .meta({ id: 'SecretBindings' });
