import type { FastifyInstance } from 'fastify';
import type { GroupApplier } from '../../groups/groups.js';
import { ApiError } from '../errors.js';
import { doc } from '../openapi/route-doc.js';
import { errorBody } from '../openapi/schemas.js';

const GROUP_KEY = /^group:[0-9a-f]{32}$/;

/** One group of incidents (grouping): its `by` values, its live members, its severity. */
export function groupRoutes(app: FastifyInstance, groups: Pick<GroupApplier, 'view'>): void {
  app.get<{ Params: { group_key: string } }>(
    '/v1/groups/:group_key',
    doc({
      summary: 'A group of incidents: the live incidents of the tenant that share the grouping.by values',
      access: 'tenant',
      tag: 'incidents',
      params: { group_key: '`group:` and 32 hex digits, as a grouped adapter receives it' },
      responses: {
        200: {
          description: 'the group',
          schema: {
            type: 'object',
            required: ['group_key', 'by', 'members', 'severity', 'created_at'],
            properties: {
              group_key: { type: 'string' },
              by: { type: 'object', additionalProperties: { type: 'string' } },
              members: { type: 'array', items: { type: 'string' } },
              severity: { type: 'string' },
              created_at: { type: 'string' },
            },
          },
        },
        400: { description: 'not a group key', schema: errorBody },
        404: { description: 'no member of that group is live', schema: errorBody },
      },
    }),
    async (req) => {
      const key = req.params.group_key;
      if (!GROUP_KEY.test(key))
        throw new ApiError('invalid_input', 'group_key must be group: and 32 lowercase hex digits', [
          { path: 'group_key', message: 'must be group: and 32 lowercase hex digits' },
        ]);
      const g = await groups.view(req.tenant, key);
      if (!g) throw new ApiError('not_found', `no live group ${key}`);
      return g;
    },
  );
}
