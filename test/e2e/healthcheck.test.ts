// needs: openssl redis
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { spawnServer } from '../helpers/process.js';
import { freePort } from '../helpers/redis.js';
import { tempDir } from '../helpers/tmp.js';
import { selfSignedCert } from '../helpers/tls.js';

// The container image's HEALTHCHECK, run as the image runs it: node on the built file, told the port
// (and whether TLS is on) by the same environment the server reads.
const execFileP = promisify(execFile);
const HEALTHCHECK = fileURLToPath(new URL('../../dist/cli/healthcheck.js', import.meta.url));
// Run asynchronously: the fake server below answers from this process.
const check = (env: Record<string, string>) =>
  execFileP(process.execPath, [HEALTHCHECK], { env: { PATH: process.env.PATH ?? '', ...env }, timeout: 20_000 }).then(
    (r) => ({ status: 0, stderr: r.stderr }),
    (e: { code: number; stderr: string }) => ({ status: e.code, stderr: e.stderr }),
  );
const portOf = (url: string) => new URL(url).port;

test('the healthcheck exits 0 for a ready server, over HTTP and over HTTPS with ONCEONLY_TLS_CERT', async () => {
  const dir = tempDir();
  const { cert, key } = selfSignedCert(dir.path);
  const plain = await spawnServer(['--port', '0', '--store', 'memory:']);
  const tls = await spawnServer(['--port', '0', '--store', 'memory:', '--tls-cert', cert, '--tls-key', key]);
  try {
    assert.deepEqual(await check({ PORT: portOf(plain.url) }), { status: 0, stderr: '' });
    assert.deepEqual(await check({ PORT: portOf(tls.url), ONCEONLY_TLS_CERT: cert }), { status: 0, stderr: '' });
    // Plain HTTP to the TLS port gets no answer it can read: not ready, and it says what it tried.
    const wrong = await check({ PORT: portOf(tls.url) });
    assert.equal(wrong.status, 1);
    assert.match(wrong.stderr, new RegExp(`http://127\\.0\\.0\\.1:${portOf(tls.url)}/readyz`));
  } finally {
    await plain.stop();
    await tls.stop();
    dir.remove();
  }
});

test('the healthcheck exits 1 when /readyz answers 503 or nothing listens', async () => {
  const notReady = createServer((req, res) => {
    res.statusCode = req.url === '/readyz' ? 503 : 200;
    res.end('{"status":"store unreachable"}');
  });
  notReady.listen(0, '127.0.0.1');
  await once(notReady, 'listening');
  try {
    const r = await check({ PORT: String((notReady.address() as AddressInfo).port) });
    assert.equal(r.status, 1);
    assert.match(r.stderr, /\/readyz answered 503/);
  } finally {
    notReady.close();
  }
  const nothing = await check({ PORT: String(await freePort()) });
  assert.equal(nothing.status, 1);
  assert.match(nothing.stderr, /ECONNREFUSED/);
});
