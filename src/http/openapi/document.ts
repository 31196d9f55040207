import { z } from 'zod';
import type { RouteDoc, Schema } from './route-doc.js';
import { errorBody } from './schemas.js';

export interface DocumentedRoute {
  method: string;
  url: string;
  doc: RouteDoc;
}

const STATUS_TEXT: Record<number, string> = {
  400: 'the body, a parameter or the query is invalid (each field named in issues)',
  401: 'no valid bearer token (tenants are configured)',
  403: 'not allowed for this tenant',
  404: 'no such thing for this tenant',
  409: 'a request with this Idempotency-Key is still being answered; see Retry-After',
  413: 'the body is over `limits.body_bytes` (512 KiB by default), or a batch or post is past its bound',
  415: 'the body is not JSON',
  422: 'this Idempotency-Key was used for another request',
  429: "the tenant's rate limit is spent; see Retry-After",
  503: 'the store cannot serve this now; retry',
};

const jsonSchema = (s: Schema): Record<string, unknown> => {
  if (!(s instanceof z.ZodType)) return s;
  const { $schema: _, ...rest } = z.toJSONSchema(s, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  return rest;
};

/** fastify's `/v1/incidents/:key` as OpenAPI's `/v1/incidents/{key}`. */
const openApiPath = (url: string) => url.replace(/:([A-Za-z_]\w*)/g, '{$1}');

/** The OpenAPI 3.1 document of the routes the server has, made from their docs. */
/** Every tenant POST takes a producer's Idempotency-Key (see src/http/idempotency.ts). */
const IDEMPOTENCY_PARAMETER = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    "Optional, 1..255 printable ASCII. The first answer is kept 24 h per tenant and key; a repeat with the same body gets it again with `Idempotent-Replayed: true`; another body with the key is 422, a repeat while the first runs 409. A tenant holds at most `limits.idempotency_keys_per_tenant` keys at once (a new one past it is 429 and runs nothing); an answer past `limits.idempotency_answer_bytes`, or past the tenant's `limits.idempotency_bytes_per_tenant`, is kept as its status and SHA-256 only, and its replay says so.",
  schema: { type: 'string', minLength: 1, maxLength: 255 },
};

export function openApiDocument(routes: readonly DocumentedRoute[], version: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const { method, url, doc } of [...routes].sort((a, b) => a.url.localeCompare(b.url))) {
    const params = Object.entries(doc.params ?? {}).map(([name, description]) => ({
      name,
      in: 'path',
      required: true,
      description,
      schema: { type: 'string' },
    }));
    const query = Object.entries(doc.query ?? {}).map(([name, q]) => ({
      name,
      in: 'query',
      required: q.required ?? false,
      description: q.description,
      schema: jsonSchema(q.schema),
    }));
    const responses: Record<string, unknown> = {};
    for (const [status, r] of Object.entries(doc.responses)) {
      responses[status] = {
        description: r.description,
        ...(r.schema ? { content: { [r.contentType ?? 'application/json']: { schema: jsonSchema(r.schema) } } } : {}),
      };
    }
    // Every route can refuse a request; the standard refusals are listed once per route.
    const idempotent = method === 'POST' && doc.access === 'tenant';
    const refusals = [...(doc.access === 'tenant' ? [401, 429] : []), ...(idempotent ? [409, 422] : [])];
    for (const status of [...(doc.body ? [400, 413, 415] : []), ...refusals]) {
      responses[status] ??= { description: STATUS_TEXT[status], content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
    }
    (paths[openApiPath(url)] ??= {})[method.toLowerCase()] = {
      operationId: `${method.toLowerCase()}${openApiPath(url).replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
      summary: doc.summary,
      ...(doc.description ? { description: doc.description } : {}),
      tags: [doc.tag],
      ...(doc.access === 'tenant' ? {} : { security: [] }),
      ...(params.length + query.length + (idempotent ? 1 : 0) > 0 ? { parameters: [...params, ...query, ...(idempotent ? [IDEMPOTENCY_PARAMETER] : [])] } : {}),
      ...(doc.body ? { requestBody: { required: true, content: { 'application/json': { schema: jsonSchema(doc.body) } } } } : {}),
      responses,
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'onceonly',
      version,
      summary: 'One fault, one key, one ticket: an idempotent deduplication gateway between monitoring and ticketing.',
      description:
        'Every arrival is turned into a deterministic key and decided in one atomic step: new (CREATE), noise (SUPPRESS) or a material change (UPDATE). ' +
        'With tenants configured, every /v1 and /v2 call needs a bearer token; without tenants there is no authentication and the server binds loopback only.',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    security: [{ bearer: [] }],
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: "a tenant's token (tenants[].tokens in the config)" } },
      schemas: { Error: errorBody },
    },
    paths,
  };
}
