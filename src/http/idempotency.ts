import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config/schema.js';
import { answerBytes, REQUEST_LEASE_MS, REQUEST_MEMORY_MS, type RequestStore, type StoredAnswer } from '../store/contract/index.js';
import { Batch } from './batch.js';
import { ApiError } from './errors.js';
import { MAX_DEPTH, nestedDeeperThan } from '../inputs/limits.js';

/**
 * Request idempotency: a POST may carry `Idempotency-Key` (1..255 printable
 * ASCII). The first request with a key runs and its answer is kept 24 h per
 * tenant and key; a repeat with the same body gets that answer again with
 * `Idempotent-Replayed: true`, even when deciding again would answer
 * otherwise (a retried CREATE is a CREATE); the same key with another body is
 * 422, and a repeat while the first still runs is 409.
 *
 * Kept: answers that are final (2xx, and 4xx but 408, 409, 425 and 429). A
 * 5xx, or an answer that says "later", frees the key, so the retry runs.
 *
 * Bounded per tenant (`limits.idempotency_*`): a new key past the tenant's
 * count is refused 429 before the request runs; an answer longer than one
 * answer's bound, or one that would pass the tenant's bytes, is kept as its
 * status and SHA-256 only (`digestOf`), and a replay says so.
 */
export const IDEMPOTENCY_HEADER = 'idempotency-key';
const PRINTABLE_ASCII = /^[\x20-\x7e]{1,255}$/;
const NOT_FINAL = new Set([408, 409, 425, 429]);
/** A body's own levels above its carried objects (`details` and the like, at most MAX_DEPTH deep): more cannot be valid anywhere. */
const MAX_BODY_DEPTH = MAX_DEPTH + 8;

declare module 'fastify' {
  interface FastifyRequest {
    idempotency?: { key: string; hash: string; replayed: boolean };
  }
}

/** What makes two requests "the same": route, path parameters and body. */
function requestHash(req: FastifyRequest): string {
  const body = req.body instanceof Batch ? req.body.lines.join('\n') : JSON.stringify(req.body ?? null);
  return createHash('sha256')
    .update(`${req.method} ${req.routeOptions.url ?? ''} ${JSON.stringify(req.params ?? {})}\n`)
    .update(body ?? '')
    .digest('hex');
}

/**
 * An answer as kept when its body is too large to keep: its status, and a
 * JSON body naming the first body's size and SHA-256 (an error keeps its
 * code), so a replay tells the sender what it got without the store paying
 * for it again.
 */
export function digestOf(a: StoredAnswer): StoredAnswer {
  const bytes = answerBytes(a);
  const sha256 = createHash('sha256').update(a.body).digest('hex');
  const message = `the first answer's body (${bytes} bytes) was larger than this tenant's Idempotency-Key answers may keep; this is its status and SHA-256`;
  const kept = { bytes, sha256 };
  if (a.status < 400) return { status: a.status, contentType: 'application/json; charset=utf-8', body: JSON.stringify({ replayed: kept, message }) };
  let code = 'invalid_input';
  try {
    code = String((JSON.parse(a.body) as { error?: { code?: unknown } }).error?.code ?? code);
  } catch {}
  return { status: a.status, contentType: 'application/json; charset=utf-8', body: JSON.stringify({ error: { code, message }, replayed: kept }) };
}

export function idempotency(app: FastifyInstance, requests: RequestStore, config: () => Config): void {
  const hold = async (req: FastifyRequest, reply: FastifyReply, raw: string | string[]) => {
    const key = Array.isArray(raw) ? raw.join(',') : raw;
    if (!PRINTABLE_ASCII.test(key))
      throw new ApiError('invalid_input', 'Idempotency-Key must be 1..255 printable ASCII characters', [
        { path: 'Idempotency-Key', message: 'must be 1..255 printable ASCII characters' },
      ]);
    // A PagerDuty-style sender with its token in the body is matched to its tenant by the route, after this: its key needs the Authorization header.
    if (config().tenants.length > 0 && !req.scoped) return;
    // Hashing serialises the body: one nested past anything a route takes is refused first (a deep
    // enough one would overflow the serialiser's stack), as the route's own validation would refuse it.
    if (!(req.body instanceof Batch) && nestedDeeperThan(req.body, MAX_BODY_DEPTH))
      throw new ApiError('invalid_input', `the body is nested more than ${MAX_BODY_DEPTH} levels deep; no route takes that`, [
        { path: '', message: `must be at most ${MAX_BODY_DEPTH} levels deep` },
      ]);
    const hash = requestHash(req);
    const limits = config().limits;
    const held = await requests.begin(req.tenant, key, hash, REQUEST_LEASE_MS, limits.idempotency_keys_per_tenant);
    if (held.state === 'full')
      throw new ApiError(
        'rate_limited',
        `this tenant already holds ${limits.idempotency_keys_per_tenant} Idempotency-Keys (limits.idempotency_keys_per_tenant), each kept 24 h; retry later, or send without the header`,
        undefined,
        60,
      );
    if (held.state === 'new') {
      req.idempotency = { key, hash, replayed: false };
      return;
    }
    if (held.bodyHash !== hash && held.bodyHash !== '')
      throw new ApiError('idempotency_key_reused', `Idempotency-Key ${JSON.stringify(key)} was used for a different request; use a new key for a new request`);
    if (held.state === 'in_flight')
      throw new ApiError('idempotency_in_flight', `a request with Idempotency-Key ${JSON.stringify(key)} is still being answered; retry shortly`, undefined, 1);
    req.idempotency = { key, hash, replayed: true };
    reply.code(held.answer.status).header('idempotent-replayed', 'true').type(held.answer.contentType).send(held.answer.body);
  };

  // Before the answer leaves: a retry that arrives the moment it is read finds it kept.
  const keep = async (req: FastifyRequest, reply: FastifyReply, payload: unknown, idem: NonNullable<FastifyRequest['idempotency']>) => {
    const status = reply.statusCode;
    try {
      if (status < 500 && !NOT_FINAL.has(status) && (typeof payload === 'string' || Buffer.isBuffer(payload))) {
        const contentType = String(reply.getHeader('content-type') ?? 'application/json; charset=utf-8');
        const whole = { status, contentType, body: String(payload) };
        const digest = digestOf(whole);
        const limits = config().limits;
        const kept = answerBytes(whole) > limits.idempotency_answer_bytes ? { whole: digest, digest } : { whole, digest };
        await requests.finish(req.tenant, idem.key, idem.hash, kept, REQUEST_MEMORY_MS, limits.idempotency_bytes_per_tenant);
      } else {
        await requests.abandon(req.tenant, idem.key, idem.hash);
      }
    } catch (err) {
      // The answer stands; the key stays in flight until its lease ends, and a retry is told 409 until then.
      req.server.logger.warn({ err: (err as Error).message, reqId: req.id }, 'could not keep the answer of an Idempotency-Key');
    }
  };

  // Callback hooks: a request without the header (nearly all) passes on at once, with no promise made for it.
  app.addHook('preHandler', (req: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => {
    const raw = req.method === 'POST' ? req.headers[IDEMPOTENCY_HEADER] : undefined;
    if (raw === undefined) return done();
    hold(req, reply, raw).then(() => done(), done);
  });
  app.addHook('onSend', (req: FastifyRequest, reply: FastifyReply, payload: unknown, done: (err: Error | null, payload?: unknown) => void) => {
    const idem = req.idempotency;
    if (!idem || idem.replayed) return done(null, payload);
    keep(req, reply, payload, idem).then(
      () => done(null, payload),
      (err: Error) => done(err),
    );
  });
}
