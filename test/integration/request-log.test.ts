import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { startServer } from '../../src/app/start.js';
import { requestIds } from '../../src/http/app.js';
import { manualClock } from '../../src/core/clock.js';

/** A server on the memory store whose log lines land in `lines` (parsed). */
async function logged(level: string) {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      for (const l of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(l) as Record<string, unknown>);
      cb();
    },
  });
  const server = await startServer({ port: 0, host: '127.0.0.1', store: 'memory:', clock: manualClock(), logger: pino({ level }, sink) });
  return { server, lines };
}

const incident = { element_id: 'olt-7', fault_class: 'LOS', root_cause_id: 'cut', severity: 'MAJOR' };

test('a request logs nothing at info; one that fails logs one line with its request id, and the server goes on', async () => {
  const { server, lines } = await logged('info');
  try {
    assert.match(String(lines.find((l) => /^listening on /.test(String(l.msg)))?.msg), /^listening on http:\/\/127\.0\.0\.1:\d+$/);
    const before = lines.length;
    const post = (headers: Record<string, string> = {}) =>
      fetch(`${server.url}/v1/incidents`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(incident) });
    for (let i = 0; i < 20; i++) assert.equal((await post()).status, 200);
    assert.equal((await fetch(`${server.url}/v1/incidents`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{' })).status, 400);
    assert.equal(lines.length, before, 'answered and refused requests log nothing at info');

    // The store stops serving: the request fails, and its line names the request.
    await server.store.close();
    const failed = await post({ 'x-request-id': 'producer-req-42' });
    assert.ok(failed.status >= 500, `status ${failed.status}`);
    const errors = lines.slice(before).filter((l) => l.level === 50);
    assert.equal(errors.length, 1, JSON.stringify(lines.slice(before)));
    assert.equal(errors[0]!.reqId, 'producer-req-42');
    assert.equal(errors[0]!.url, '/v1/incidents');
    assert.equal(errors[0]!.msg, 'request failed');
    assert.equal((await fetch(`${server.url}/openapi.json`)).status, 200, 'what needs no store still answers');
  } finally {
    await server.close().catch(() => {});
  }
});

test('request ids made here are unique, and differ between processes (a random prefix and a count)', () => {
  const a = requestIds();
  const b = requestIds();
  const ids = Array.from({ length: 10_000 }, () => a());
  assert.equal(new Set(ids).size, ids.length);
  const prefix = (id: string) => id.split('-')[0];
  assert.notEqual(prefix(a()), prefix(b()));
  assert.match(ids[0]!, /^[0-9a-f]{16}-1$/);
});
