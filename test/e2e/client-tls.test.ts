// needs: redis mosquitto openssl
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connectAsync } from 'mqtt';
import { postJson, spawnServer } from '../helpers/process.js';
import { freePort, startRedis } from '../helpers/redis.js';
import { tempDir } from '../helpers/tmp.js';
import { selfSignedCert } from '../helpers/tls.js';
import { until } from '../helpers/wait.js';

/**
 * onceonly as a TLS client: its store over rediss:// and its MQTT adapter
 * over mqtts://, to a real redis-server and Mosquitto with TLS listeners and
 * a certificate made here, trusted the way Node trusts a private CA
 * (NODE_EXTRA_CA_CERTS). Without that trust the connection is refused, not
 * made in the clear.
 */

const incident = { element_id: 'olt-tls', fault_class: 'LOS', root_cause_id: 'cut', severity: 'MAJOR' };

test('rediss://: decisions go to a TLS Redis when its certificate is trusted, and the server is not ready when it is not', async () => {
  const dir = tempDir();
  const { cert, key } = selfSignedCert(dir.path);
  const tlsPort = await freePort();
  const redis = await startRedis([
    '--tls-port',
    String(tlsPort),
    '--tls-cert-file',
    cert,
    '--tls-key-file',
    key,
    '--tls-ca-cert-file',
    cert,
    '--tls-auth-clients',
    'no',
  ]);
  const store = `rediss://127.0.0.1:${tlsPort}`;
  const journal = join(dir.path, 'c.yaml');
  try {
    writeFileSync(journal, `failopen: { journal_path: ${JSON.stringify(join(dir.path, 'j1.db'))} }\n`);
    const trusted = await spawnServer(['--port', '0', '--store', store, '--config', journal], { NODE_EXTRA_CA_CERTS: cert });
    try {
      await until(
        async () => (await fetch(`${trusted.url}/readyz`)).status === 200,
        15_000,
        () => 'never ready over TLS',
      );
      const r = await postJson(`${trusted.url}/v1/incidents`, incident);
      assert.deepEqual([r.status, r.body.decision, r.body.provisional], [200, 'CREATE', false], 'decided in the store, over TLS');
      assert.ok(Number(redis.cli('DBSIZE')) > 0, 'the record is in the TLS Redis');
    } finally {
      await trusted.stop();
    }
    writeFileSync(journal, `failopen: { journal_path: ${JSON.stringify(join(dir.path, 'j2.db'))} }\n`);
    const untrusted = await spawnServer(['--port', '0', '--store', store, '--config', journal]);
    try {
      const ready = await fetch(`${untrusted.url}/readyz`);
      assert.equal(ready.status, 503, 'a certificate it does not trust is not a store');
      const r = await postJson(`${untrusted.url}/v1/incidents`, { ...incident, element_id: 'olt-untrusted' });
      assert.deepEqual([r.status, r.body.provisional], [200, true], 'it failed open instead of talking in the clear');
    } finally {
      await untrusted.stop();
    }
  } finally {
    await redis.stop();
    dir.remove();
  }
});

test('mqtts://: the MQTT adapter publishes to a TLS broker whose certificate it trusts', async () => {
  const dir = tempDir();
  const { cert, key } = selfSignedCert(dir.path);
  // Mosquitto drops to its own user: it must be able to reach the folder and read the key.
  chmodSync(dir.path, 0o755);
  chmodSync(key, 0o644);
  const port = await freePort();
  const conf = join(dir.path, 'mosquitto.conf');
  writeFileSync(conf, `listener ${port} 127.0.0.1\nallow_anonymous true\ncafile ${cert}\ncertfile ${cert}\nkeyfile ${key}\n`);
  const broker = spawn('mosquitto', ['-c', conf], { stdio: 'ignore' });
  const ca = readFileSync(cert);
  const listener = await until(
    () => connectAsync(`mqtts://127.0.0.1:${port}`, { ca, reconnectPeriod: 0, connectTimeout: 1000 }).catch(() => null),
    10_000,
    () => 'the TLS broker never took a connection',
  );
  const got: string[] = [];
  listener.on('message', (t) => got.push(t));
  await listener.subscribeAsync('tls-test/#', { qos: 1 });
  const config = join(dir.path, 'c.yaml');
  writeFileSync(config, `adapters: [ { name: mes, type: mqtt, url: "mqtts://127.0.0.1:${port}", topic: "tls-test/{data.process_id}", retain: false } ]\n`);
  const s = await spawnServer(['--port', '0', '--store', `sqlite:${join(dir.path, 'o.db')}`, '--config', config], { NODE_EXTRA_CA_CERTS: cert });
  try {
    const v = await postJson(`${s.url}/v1/violations`, {
      process_id: 'etch',
      rule_id: 'nelson_1',
      timestamp: 1_770_000_000,
      value: 12.9,
      center: 10,
      ucl: 12.5,
      lcl: 7.5,
    });
    assert.equal(v.body.decision, 'CREATE');
    await until(
      () => got.length > 0,
      15_000,
      () => 'nothing published over TLS',
    );
    assert.deepEqual(got, ['tls-test/etch']);
  } finally {
    await s.stop();
    await listener.endAsync();
    const exited = once(broker, 'exit');
    broker.kill('SIGKILL');
    await exited;
    dir.remove();
  }
});
