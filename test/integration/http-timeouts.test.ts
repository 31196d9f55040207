import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { inProcessServer, type InProcessServer } from '../helpers/server.js';

/**
 * A client that dribbles its headers or its body holds a connection for at
 * most `http.headers_timeout_ms` / `http.request_timeout_ms`: then it is
 * answered 408 and closed. Twenty such clients at once are all let go.
 */
let s: InProcessServer;
before(async () => {
  s = await inProcessServer({ config: 'http: { headers_timeout_ms: 500, request_timeout_ms: 1000 }\n' });
});
after(() => s?.stop());

/** Opens a socket, writes `first`, then `drip` every 200 ms; resolves with what came back and how long until the server closed it (or 6 s). */
function slowClient(first: string, drip: string | null): Promise<{ answer: string; closedAfterMs: number | null }> {
  const { port } = new URL(s.url);
  return new Promise((resolve) => {
    const started = performance.now();
    const sock: Socket = connect(Number(port), '127.0.0.1');
    let answer = '';
    let timer: NodeJS.Timeout | null = null;
    const done = (closedAfterMs: number | null) => {
      if (timer) clearInterval(timer);
      clearTimeout(giveUp);
      sock.destroy();
      resolve({ answer, closedAfterMs });
    };
    const giveUp = setTimeout(() => done(null), 6000);
    sock.on('data', (d) => (answer += d));
    sock.on('close', () => done(performance.now() - started));
    sock.on('error', () => {});
    sock.on('connect', () => {
      sock.write(first);
      if (drip !== null) timer = setInterval(() => sock.write(drip), 200);
    });
  });
}

test('a body sent a byte at a time is answered 408 and closed after request_timeout_ms', async () => {
  const r = await slowClient('POST /v1/incidents HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 10000\r\n\r\n{', ' ');
  assert.ok(r.closedAfterMs !== null, 'the server closed the connection (it held it 6 s before)');
  assert.ok(r.closedAfterMs! < 4000, `closed after ${r.closedAfterMs} ms`);
  assert.match(r.answer, /^HTTP\/1\.1 408/);
});

test('headers that never end are let go after headers_timeout_ms', async () => {
  const r = await slowClient('POST /v1/incidents HTTP/1.1\r\nHost: 127.0.0.1\r\n', 'X-Slow: 1\r\n');
  assert.ok(r.closedAfterMs !== null && r.closedAfterMs < 4000, `closed after ${r.closedAfterMs} ms`);
});

test('twenty dribbling clients at once are all let go, and the server answers others meanwhile', async () => {
  const clients = Array.from({ length: 20 }, () =>
    slowClient('POST /v1/incidents HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 10000\r\n\r\n{', ' '),
  );
  const r = await fetch(`${s.url}/healthz`);
  assert.equal(r.status, 200);
  const all = await Promise.all(clients);
  assert.deepEqual(
    all.filter((c) => c.closedAfterMs === null),
    [],
    'every slow client was closed',
  );
});
