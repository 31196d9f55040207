import { VERSION } from '../../core/version.js';
import type { FastifyInstance } from 'fastify';
import { type DocumentedRoute, openApiDocument } from '../openapi/document.js';
import { doc } from '../openapi/route-doc.js';
import { object } from '../openapi/schemas.js';

/** `GET /openapi.json`: the API as OpenAPI 3.1, made once from the routes' own docs after every route is registered. */
export function openApiRoutes(app: FastifyInstance, routes: () => readonly DocumentedRoute[]): void {
  let body: string | null = null;
  app.get(
    '/openapi.json',
    doc({
      summary: 'This API as an OpenAPI 3.1 document',
      access: 'tenant',
      tag: 'operations',
      responses: { 200: { description: 'the document', schema: object } },
    }),
    (_req, reply) => {
      body ??= JSON.stringify(openApiDocument(routes(), VERSION));
      return reply.type('application/json; charset=utf-8').send(body);
    },
  );
}
