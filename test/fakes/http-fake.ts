import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Recorded {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  body: any;
  raw: string;
  /** ms, Date.now() when it arrived */
  at: number;
  /** the Retry-After (seconds) an injected fault answered it with */
  answeredRetryAfterS?: number;
}

/**
 * What the fake does with one request before its own logic: answer normally,
 * answer an error (with a Retry-After), hang, or apply and then drop the
 * connection (the ambiguous failure: the change landed, the answer did not).
 */
export type Fault = 'ok' | 'apply_then_drop' | 'hang' | { delayMs: number } | { status: number; retryAfter?: number; body?: unknown };

export interface FakeServer {
  url: string;
  requests: Recorded[];
  /** decides each request's fault (default: always ok) */
  faults: (r: Recorded) => Fault;
  close(): Promise<void>;
}

export type Handler = (r: Recorded) => { status: number; body?: unknown; headers?: Record<string, string> };

/** A small HTTP server on a free loopback port that records every request and answers through `handler`. */
export async function startFake(handler: Handler): Promise<FakeServer> {
  const hanging = new Set<ServerResponse>();
  const fake: FakeServer = {
    url: '',
    requests: [],
    faults: () => 'ok',
    close: async () => {},
  };
  const server = createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (d) => (raw += d));
    req.on('end', () => {
      const u = new URL(req.url ?? '/', 'http://x');
      let body: unknown = null;
      try {
        body = raw ? JSON.parse(raw) : null;
      } catch {
        body = raw;
      }
      const r: Recorded = { method: req.method ?? '', path: u.pathname, query: u.searchParams, headers: req.headers, body, raw, at: Date.now() };
      fake.requests.push(r);
      const fault = fake.faults(r);
      if (fault === 'hang') {
        hanging.add(res);
        return;
      }
      if (typeof fault === 'object' && 'delayMs' in fault) {
        setTimeout(() => {
          const out = handler(r);
          res.writeHead(out.status, { 'content-type': 'application/json', ...out.headers });
          res.end(out.body === undefined ? '' : JSON.stringify(out.body));
        }, fault.delayMs);
        return;
      }
      if (typeof fault === 'object') {
        if (fault.retryAfter !== undefined) r.answeredRetryAfterS = fault.retryAfter;
        res.writeHead(fault.status, {
          'content-type': 'application/json',
          ...(fault.retryAfter !== undefined ? { 'retry-after': String(fault.retryAfter) } : {}),
        });
        res.end(JSON.stringify(fault.body ?? { error: `injected ${fault.status}` }));
        return;
      }
      const out = handler(r);
      if (fault === 'apply_then_drop') {
        req.socket.destroy();
        return;
      }
      res.writeHead(out.status, { 'content-type': 'application/json', ...out.headers });
      res.end(out.body === undefined ? '' : typeof out.body === 'string' ? out.body : JSON.stringify(out.body));
    });
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fake.close = () =>
    new Promise<void>((resolve) => {
      for (const res of hanging) res.socket?.destroy();
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return fake;
}

/** A receiver that answers 2xx to everything (webhook, PagerDuty, Slack shapes are checked by the tests). */
export function startSink(status = 202, body: unknown = { status: 'success', message: 'Event processed' }) {
  return startFake(() => ({ status, body }));
}
