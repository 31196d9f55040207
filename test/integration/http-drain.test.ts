/**
 * SIGTERM drains: a request in flight when the drain begins is answered, and
 * one that arrives meanwhile on a connection still open is refused in the
 * documented error shape (`shutting_down`, with `Retry-After` and
 * `Connection: close`), not fastify's default body, and changes nothing.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { incidentKey } from '../../src/core/identity.js';
import { inProcessServer } from '../helpers/server.js';

const incident = (i: number) => JSON.stringify({ element_id: `drain-${i}`, fault_class: 'LOS', root_cause_id: 'rc', severity: 'MAJOR' });
const request = (body: string) =>
  `POST /v1/incidents HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`;

test('a request arriving during the drain gets shutting_down in the error shape; the one in flight is answered', async () => {
  const server = await inProcessServer({ store: 'memory' });
  const { port } = new URL(server.url);
  const socket = connect(Number(port), '127.0.0.1');
  await new Promise<void>((resolve) => socket.once('connect', resolve));
  let received = '';
  socket.on('data', (d) => (received += d));
  const ended = new Promise<void>((resolve) => socket.once('close', () => resolve()));

  // In flight: headers and half the body, then the drain begins.
  const first = incident(1);
  socket.write(request(first) + first.slice(0, 10));
  await new Promise((r) => setTimeout(r, 100));
  const closing = server.close();
  await new Promise((r) => setTimeout(r, 100));
  // The rest of the first, and a second request pipelined behind it on the same connection.
  const second = incident(2);
  socket.write(first.slice(10) + request(second) + second);
  await ended;
  await closing;

  const answers = received.split(/(?=HTTP\/1\.1 )/);
  assert.equal(answers.length, 2, received);
  assert.match(answers[0]!, /^HTTP\/1\.1 200 /, 'the request in flight is answered');
  assert.match(answers[0]!, /"decision":"CREATE"/);
  const [head, body] = answers[1]!.split('\r\n\r\n');
  assert.match(head!, /^HTTP\/1\.1 503 /);
  assert.match(head!, /\r\nretry-after: 1\r\n/i);
  assert.match(head!, /\r\nconnection: close\r\n/i);
  const parsed = JSON.parse(body!) as { error: { code: string; message: string } };
  assert.equal(parsed.error.code, 'shutting_down');
  assert.match(parsed.error.message, /shutting down/);
  // Refused, it changed nothing: the memory store (still readable after the close) holds only the first.
  const live = await server.store.queries.listIncidents('default', 10);
  assert.deepEqual(
    live.map((r) => r.key),
    [incidentKey(JSON.parse(first))],
  );
});
