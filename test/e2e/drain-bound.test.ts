import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { spawnServer } from '../helpers/process.js';
import { tempDir } from '../helpers/tmp.js';

// A client that never finishes its request (its body promised and not sent) holds a connection open.
// SIGTERM answers what is in flight, and a drain waits for it only so long: past the bound the replica
// closes what is still open and exits 0, well inside an orchestrator's 30 s grace.
test('SIGTERM: a request that never ends holds the drain for at most its bound; the replica exits 0', async () => {
  const dir = tempDir();
  const server = await spawnServer(['--port', '0', '--store', `sqlite:${dir.path}/s.db`]);
  const socket = connect(Number(new URL(server.url).port), '127.0.0.1');
  try {
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    socket.write('POST /v1/incidents HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"element_id"');
    // The request reached the server (its route is matched once the headers are in) before the signal.
    await new Promise((r) => setTimeout(r, 300));
    const started = Date.now();
    assert.equal(await server.stop('SIGTERM'), 0, 'exits 0');
    const seconds = (Date.now() - started) / 1000;
    console.log(`drain with a request that never ended: ${seconds.toFixed(1)} s`);
    assert.ok(
      server.lines.some((l) => l.includes('HTTP connections still open')),
      'it says it closed what was still open',
    );
  } finally {
    socket.destroy();
    await server.stop('SIGKILL');
    dir.remove();
  }
});
