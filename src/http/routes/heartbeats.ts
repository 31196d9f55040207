import type { FastifyInstance, FastifyRequest } from 'fastify';
import { HEARTBEAT_NAME_RULE } from '../../config/heartbeats.js';
import type { HeartbeatMonitor, HeartbeatStatus } from '../../heartbeats/heartbeats.js';
import { ApiError } from '../errors.js';
import { doc } from '../openapi/route-doc.js';
import { errorBody } from '../openapi/schemas.js';

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** A heartbeat as the API shows it. */
export const heartbeatView = (s: HeartbeatStatus) => ({ name: s.name, last_ping_at: iso(s.lastPingAt), state: s.state, due_at: iso(s.dueAt) });

const heartbeatBody = {
  type: 'object',
  required: ['name', 'last_ping_at', 'state', 'due_at'],
  properties: {
    name: { type: 'string' },
    last_ping_at: { type: ['string', 'null'], description: 'RFC 3339; null when never pinged' },
    state: { type: 'string', enum: ['ok', 'missed', 'never'] },
    due_at: { type: 'string', description: 'when it is missed without a ping (RFC 3339)' },
  },
};

const nameParam = { name: `the heartbeat's name as configured (${HEARTBEAT_NAME_RULE})` };

/** Dead-man's switches: pings (onceonly's own route and Opsgenie's) and the list. */
export function heartbeatRoutes(app: FastifyInstance, monitor: HeartbeatMonitor): void {
  const ping = async (req: FastifyRequest<{ Params: { name: string } }>) => {
    const s = await monitor.ping(req.tenant, req.params.name);
    if (!s) throw new ApiError('not_found', `no heartbeat named ${JSON.stringify(req.params.name)} is configured for this tenant`);
    return s;
  };

  app.post<{ Params: { name: string } }>(
    '/v1/heartbeats/:name',
    doc({
      summary: "Ping a heartbeat (a dead-man's switch)",
      description: 'Records the ping in the shared store; a ping after a miss closes its HEARTBEAT_MISSED incident. Any body is ignored.',
      access: 'tenant',
      tag: 'noise',
      params: nameParam,
      responses: {
        202: { description: 'pinged', schema: heartbeatBody },
        404: { description: 'no heartbeat of that name for this tenant', schema: errorBody },
      },
    }),
    async (req, reply) => reply.code(202).send(heartbeatView(await ping(req))),
  );

  // Opsgenie's heartbeat ping, for pingers moved over unchanged (Authorization: GenieKey <token> works too).
  for (const method of ['GET', 'POST'] as const) {
    app.route<{ Params: { name: string } }>({
      method,
      url: '/v2/heartbeats/:name/ping',
      ...doc({
        summary: "Ping a heartbeat, as Opsgenie's Heartbeat API is pinged",
        description: 'The same ping as POST /v1/heartbeats/{name}, answered as Opsgenie answers.',
        access: 'tenant',
        tag: 'drop-in',
        params: nameParam,
        responses: {
          202: {
            description: 'pinged',
            schema: {
              type: 'object',
              required: ['result', 'took', 'requestId'],
              properties: { result: { type: 'string' }, took: { type: 'number' }, requestId: { type: 'string' } },
            },
          },
          404: { description: 'no heartbeat of that name for this tenant', schema: errorBody },
        },
      }),
      handler: async (req, reply) => {
        const started = performance.now();
        await ping(req);
        return reply
          .code(202)
          .send({ result: 'PONG - Heartbeat received', took: Number(((performance.now() - started) / 1000).toFixed(3)), requestId: req.id });
      },
    });
  }

  app.get(
    '/v1/heartbeats',
    doc({
      summary: "The tenant's heartbeats: last ping and state",
      description: '`never`: not pinged since it was first watched, and not yet due; `missed`: overdue, its incident open; `ok`: pinged in time.',
      access: 'tenant',
      tag: 'noise',
      responses: { 200: { description: 'by name', schema: { type: 'array', items: heartbeatBody } } },
    }),
    async (req) => (await monitor.list(req.tenant)).map(heartbeatView),
  );
}
