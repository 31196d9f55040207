import type { z } from 'zod';

/** A JSON Schema (2020-12, as OpenAPI 3.1 uses), or a zod schema turned into one. */
export type Schema = z.ZodType | Record<string, unknown>;

/**
 * What a route says about itself, carried in its fastify route options
 * (`config.doc`) so the OpenAPI document is made from the routes the server
 * really has: a route without one fails the test that walks the route table.
 */
export interface RouteDoc {
  summary: string;
  description?: string;
  /** `tenant`: needs a tenant's bearer token when tenants are configured; `open`: never (probes, scrapers, the dashboard's page). */
  access: 'tenant' | 'open';
  /** PagerDuty-style: without an Authorization header, the body's `routing_key` is the token (the route checks it). */
  tokenInBody?: true;
  tag: 'incidents' | 'events' | 'violations' | 'drop-in' | 'noise' | 'delivery' | 'operations' | 'dashboard';
  body?: Schema;
  /** other request body types accepted, besides application/json */
  query?: Record<string, { description: string; schema: Schema; required?: boolean }>;
  params?: Record<string, string>;
  /** status → description, body schema and content type (application/json by default) */
  responses: Record<number, { description: string; schema?: Schema; contentType?: string }>;
}

/** The route options that carry a doc: `app.post(path, doc(...), handler)`. */
export const doc = (d: RouteDoc) => ({ config: { doc: d } });

declare module 'fastify' {
  interface FastifyContextConfig {
    doc?: RouteDoc;
  }
}
