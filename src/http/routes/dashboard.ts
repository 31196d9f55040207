import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import type { ServerResponse } from 'node:http';
import type { Config } from '../../config/schema.js';
import { stillAdmitted } from '../access.js';
import { snapshot, type DashboardDeps } from '../dashboard/snapshot.js';
import { ApiError } from '../errors.js';
import { doc } from '../openapi/route-doc.js';
import { object } from '../openapi/schemas.js';

/** The dashboard's page and files: no build step, served as they are. */
const PAGE = [
  { url: '/', file: 'index.html', type: 'text/html', summary: 'The live dashboard (HTML)', what: 'the page' },
  { url: '/dashboard/app.js', file: 'app.js', type: 'text/javascript', summary: "The dashboard's script", what: 'JavaScript' },
  { url: '/dashboard/style.css', file: 'style.css', type: 'text/css', summary: "The dashboard's style sheet", what: 'CSS' },
  {
    url: '/dashboard/explain.js',
    file: 'explain.js',
    type: 'text/javascript',
    summary: "A key's history as a timeline and its answer (the page's and the CLI's)",
    what: 'JavaScript',
  },
];

/** The page loads its script, style sheet and data from this server only, and no other site may frame it. */
const PAGE_POLICY =
  "default-src 'self'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

const asset = (name: string) => readFileSync(new URL(`../dashboard/public/${name}`, import.meta.url), 'utf8');

/**
 * The dashboard: a page and its script (no build step), a JSON snapshot, and
 * a Server-Sent Events stream of snapshots once a second. The stream is read
 * with fetch (not EventSource) so the tenant's token travels in the
 * Authorization header, never in a URL.
 */
export function dashboardRoutes(app: FastifyInstance, deps: DashboardDeps, config: () => Config, intervalMs = 1000): void {
  // The page and its two files, read once at start: open, like the probes (the data behind them is not).
  for (const a of PAGE) {
    const body = asset(a.file);
    app.get(
      a.url,
      doc({
        summary: a.summary,
        access: 'open',
        tag: 'dashboard',
        responses: { 200: { description: a.what, schema: { type: 'string' }, contentType: a.type } },
      }),
      (_req, reply) =>
        reply
          .type(`${a.type}; charset=utf-8`)
          // Never framed (a page of another site cannot overlay it to steal clicks), and only its own files run.
          .header('x-frame-options', 'DENY')
          .header('content-security-policy', PAGE_POLICY)
          .header('x-content-type-options', 'nosniff')
          .send(body),
    );
  }

  app.get(
    '/v1/dashboard',
    doc({
      summary: "The dashboard's data: the decision mix, live incidents, devices, accounting, delivery",
      access: 'tenant',
      tag: 'dashboard',
      responses: { 200: { description: 'a snapshot', schema: object } },
    }),
    (req) => snapshot(deps, req.tenant, req.scoped),
  );

  // Open streams, in all and per tenant: each costs a snapshot a second, so both are bounded
  // (limits.dashboard_streams, limits.dashboard_streams_per_tenant), and a stream whose client
  // stops reading is dropped once limits.dashboard_unsent_bytes wait unsent.
  const streams = new Set<ServerResponse>();
  const perTenant = new Map<string, number>();
  app.get(
    '/v1/dashboard/stream',
    doc({
      summary: 'The same snapshot every second, as Server-Sent Events',
      access: 'tenant',
      tag: 'dashboard',
      responses: { 200: { description: 'an event stream of `snapshot` events', schema: { type: 'string' }, contentType: 'text/event-stream' } },
    }),
    (req, reply) => {
      const mine = perTenant.get(req.tenant) ?? 0;
      const { dashboard_streams: total, dashboard_streams_per_tenant: each } = config().limits;
      if (streams.size >= total || mine >= each) {
        const which =
          streams.size >= total ? `${total} in all (limits.dashboard_streams)` : `${each} for tenant ${req.tenant} (limits.dashboard_streams_per_tenant)`;
        throw new ApiError('rate_limited', `too many open dashboard streams (${which}); close one, or poll GET /v1/dashboard`, undefined, 5);
      }
      perTenant.set(req.tenant, mine + 1);
      reply.hijack();
      const res = reply.raw;
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' });
      streams.add(res);
      let busy = false;
      const push = async () => {
        if (busy) return; // a slow store: skip a tick rather than pile snapshots up
        // A client that does not read lets the kernel buffer fill, then ours: drop it rather than grow.
        if (res.writableLength > config().limits.dashboard_unsent_bytes) {
          res.destroy();
          return;
        }
        // A session ends when its token does: a reload that revoked it ends the stream at its next tick.
        if (!stillAdmitted(req, config())) {
          res.end(`event: error\ndata: ${JSON.stringify({ message: 'the token of this stream is no longer valid; the stream ends' })}\n\n`);
          return;
        }
        busy = true;
        try {
          res.write(`event: snapshot\ndata: ${JSON.stringify(await snapshot(deps, req.tenant, req.scoped))}\n\n`);
        } catch (err) {
          res.write(`event: error\ndata: ${JSON.stringify({ message: (err as Error).message })}\n\n`);
        } finally {
          busy = false;
        }
      };
      void push();
      const timer = setInterval(() => void push(), intervalMs);
      res.on('close', () => {
        clearInterval(timer);
        if (streams.delete(res)) {
          const left = (perTenant.get(req.tenant) ?? 1) - 1;
          if (left > 0) perTenant.set(req.tenant, left);
          else perTenant.delete(req.tenant);
        }
      });
    },
  );
  // Open streams would hold a graceful close forever: end them first.
  app.addHook('preClose', async () => {
    for (const res of streams) res.end();
  });
}
