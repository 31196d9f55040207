// needs: redis postgres
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, spawnServer } from '../helpers/process.js';
import { freePort, startRedis, type RedisServer } from '../helpers/redis.js';
import { tempDir } from '../helpers/tmp.js';
import { recordedStream } from '../helpers/device-drill.js';
import pg from 'pg';
import { PG_URL } from '../helpers/postgres.js';

let redis: RedisServer;
before(async () => {
  redis = await startRedis();
});
after(() => redis?.stop());

/** Two servers on one shared store replay overlapping windows of the recorded stream. */
async function replayDrill(storeUrl: string) {
  const dir = tempDir();
  const cfg = (n: number) => {
    const p = join(dir.path, `c${n}.yaml`);
    writeFileSync(p, `failopen: { timeout_ms: 2000, journal_path: ${join(dir.path, `j${n}.db`)} }\n`);
    return p;
  };
  const [a, b] = await Promise.all([
    spawnServer(['--port', '0', '--store', storeUrl, '--config', cfg(1)]),
    spawnServer(['--port', '0', '--store', storeUrl, '--config', cfg(2)]),
  ]);
  try {
    const s = recordedStream();
    const cut1 = Math.floor(s.lines.length * 0.7);
    const cut2 = Math.floor(s.lines.length * 0.3);
    writeFileSync(join(dir.path, 'w1.ndjson'), `${s.lines.slice(0, cut1).join('\n')}\n`);
    writeFileSync(join(dir.path, 'w2.ndjson'), `${s.lines.slice(cut2).join('\n')}\n`);
    const r1 = runCli(['replay', join(dir.path, 'w1.ndjson'), '--url', a!.url, '--concurrency', '16', '--json']);
    const r2 = runCli(['replay', join(dir.path, 'w2.ndjson'), '--url', b!.url, '--concurrency', '16', '--json']);
    assert.equal(r1.status, 0, r1.stderr);
    assert.equal(r2.status, 0, r2.stderr);
    assert.match(r1.stderr, /replay: 100%/, 'a progress report on stderr');
    const [w1, w2] = [JSON.parse(r1.stdout), JSON.parse(r2.stdout)];
    console.log(`window 1 (${cut1} lines) on replica A: ${JSON.stringify(w1)}`);
    console.log(`window 2 (${s.lines.length - cut2} lines) on replica B: ${JSON.stringify(w2)}`);
    assert.equal(w1.invariant_holds && w2.invariant_holds, true);
    assert.equal(w1.applied + w2.applied, s.identities, 'applied = unique identities');
    assert.equal(w1.notifications + w2.notifications, s.transitions, 'notifications = unique transitions');
    assert.equal(w2.duplicate, s.lines.slice(cut2, cut1).length + s.lines.slice(cut1).filter((l, i, xs) => i > 0 && xs[i - 1] === l).length);
    assert.deepEqual(w1.rejected, {});
    assert.deepEqual(w2.rejected, {});

    // Both replicas read the same final state, and it is the stream's last word per terminal.
    for (const [device, want] of s.expected) {
      const [da, db] = await Promise.all(
        [a!.url, b!.url].map(async (u) => (await fetch(`${u}/v1/devices/acme/${device}`)).json() as Promise<Record<string, unknown>>),
      );
      assert.deepEqual({ boot: da!.boot_id, sequence: da!.sequence, state: da!.state }, { boot: want.boot, sequence: want.sequence, state: want.state });
      assert.deepEqual(da, { ...db, age_seconds: da!.age_seconds });
    }
    // Each server's own accounting reconciles too.
    for (const u of [a!.url, b!.url]) {
      const st = (await (await fetch(`${u}/v1/stats`)).json()) as { received: number; applied: number; duplicate: number; rejected: Record<string, number> };
      assert.equal(st.received, st.applied + st.duplicate + Object.values(st.rejected).reduce((x, y) => x + y, 0));
    }
  } finally {
    await Promise.all([a?.stop('SIGKILL'), b?.stop('SIGKILL')]);
    dir.remove();
  }
}

test('two servers on one Redis replay overlapping windows: one final state, applied = identities, notifications = transitions', () => replayDrill(redis.url));

test('the same drill on one Postgres', async () => {
  const schema = `oo_drill_${process.pid}`;
  const admin = new pg.Pool({ connectionString: PG_URL, max: 1 });
  try {
    await replayDrill(`${PG_URL}?schema=${schema}`);
  } finally {
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await admin.end();
  }
});

test('replay exits non-zero when the accounting cannot reconcile (no server answers)', async () => {
  const dir = tempDir();
  try {
    writeFileSync(
      join(dir.path, 'x.ndjson'),
      '{"tenant_id":"a","device_id":"d","boot_id":"b","sequence":1,"state":"S","observed_at":"2026-11-30T12:00:00Z"}\n',
    );
    const r = runCli(['replay', join(dir.path, 'x.ndjson'), '--url', `http://127.0.0.1:${await freePort()}`]);
    assert.equal(r.status, 1);
    assert.match(r.stdout, /unanswered +1/);
    assert.match(r.stdout, /invariant .*BROKEN/);
    const bad = runCli(['replay', join(dir.path, 'missing.ndjson'), '--url', 'http://127.0.0.1:1']);
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /ENOENT/);
    const conc = runCli(['replay', join(dir.path, 'x.ndjson'), '--url', 'http://127.0.0.1:1', '--concurrency', '0']);
    assert.equal(conc.status, 2);
    assert.match(conc.stderr, /--concurrency/);
  } finally {
    dir.remove();
  }
});
