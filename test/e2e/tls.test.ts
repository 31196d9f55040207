// needs: openssl
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import { tempDir } from '../helpers/tmp.js';
import { selfSignedCert } from '../helpers/tls.js';
import { runCli, spawnServer } from '../helpers/process.js';

test('--tls-cert/--tls-key serve HTTPS with the given certificate', async () => {
  const dir = tempDir();
  const { cert, key } = selfSignedCert(dir.path);
  const s = await spawnServer(['--port', '0', '--store', 'memory:', '--tls-cert', cert, '--tls-key', key]);
  try {
    assert.match(s.url, /^https:\/\/127\.0\.0\.1:\d+$/);
    const body = await new Promise<string>((resolve, reject) => {
      const req = request(`${s.url}/healthz`, { ca: readFileSync(cert) }, (res) => {
        let data = '';
        res.on('data', (d) => (data += d));
        res.on('end', () => resolve(data));
      });
      req.on('error', reject);
      req.end();
    });
    assert.deepEqual(JSON.parse(body), { status: 'ok' });
    // Plain HTTP on the TLS port is not served.
    await assert.rejects(fetch(`${s.url.replace('https', 'http')}/healthz`));
  } finally {
    await s.stop();
    dir.remove();
  }
});

test('TLS flags are refused when only one is given or a file is missing', () => {
  const one = runCli(['serve', '--port', '0', '--store', 'memory:', '--tls-cert', '/nonexistent.pem']);
  assert.equal(one.status, 2);
  assert.match(one.stderr, /go together/);
  const missing = runCli(['serve', '--port', '0', '--store', 'memory:', '--tls-cert', '/nonexistent.pem', '--tls-key', '/nonexistent.key']);
  assert.equal(missing.status, 2);
  assert.match(missing.stderr, /cannot read TLS files/);
});
