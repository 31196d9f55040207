import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { Config } from '../../config/schema.js';
import { parseWith } from '../../core/validation.js';
import { dryRun } from '../../delivery/dry-run.js';
import { labelSet } from '../../inputs/limits.js';
import { ApiError } from '../errors.js';
import { doc } from '../openapi/route-doc.js';
import { errorBody } from '../openapi/schemas.js';

const routeTestSchema = z.strictObject({ labels: labelSet });

const rendered = { type: 'object', additionalProperties: { type: 'object', additionalProperties: { type: 'string' } } };

/**
 * The dry run of the running config: which adapters a label set reaches and
 * what their field templates render. A tenant tries only its own alerts: the
 * `tenant` label is the caller's.
 */
export function routeTestRoutes(app: FastifyInstance, config: () => Config): void {
  app.post(
    '/v1/routes/test',
    doc({
      summary: 'Which adapters a label set reaches, and the fields their templates render for it, under the running config',
      description:
        "Answers as `onceonly routes test` prints, in the order `amtool config routes test` prints receivers (every adapter when the config has no `route:`). The `tenant` label is the caller's: another tenant's is refused. `errors` names an adapter whose fields did not render (such a delivery would be a dead letter).",
      access: 'tenant',
      tag: 'delivery',
      body: routeTestSchema,
      responses: {
        200: {
          description: 'the adapters and their rendered fields',
          schema: {
            type: 'object',
            required: ['adapters', 'fields'],
            properties: {
              adapters: { type: 'array', items: { type: 'string' } },
              fields: rendered,
              errors: { type: 'object', additionalProperties: { type: 'string' } },
            },
          },
        },
        403: { description: "the labels name another tenant than the caller's", schema: errorBody },
      },
    }),
    async (req) => {
      const { labels } = parseWith(routeTestSchema, req.body, 'routes test');
      if (labels.tenant !== undefined && labels.tenant !== req.tenant)
        throw new ApiError('forbidden', "a tenant tests routes with its own tenant label only: leave tenant out, or give the caller's");
      return dryRun(config(), req.tenant, { ...labels, tenant: req.tenant });
    },
  );
}
