// needs: postgres
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { fire, metric, pct, type Shot } from '../helpers/load.js';
import { PG_URL } from '../helpers/postgres.js';
import { REPO_ROOT, spawnServer } from '../helpers/process.js';
import { tempDir } from '../helpers/tmp.js';
import { startSink } from '../fakes/http-fake.js';
import { until } from '../helpers/wait.js';
import { caughtUp } from '../helpers/settle.js';

const incident = (k: number, severity = 'MAJOR') => ({ element_id: `olt-${k}`, fault_class: 'LOS', root_cause_id: 'fiber-cut-9', severity });

test('two replicas sharing one Postgres: 1,000 keys × 50 concurrent copies → exactly 1,000 CREATEs, each delivered once', async () => {
  const schema = `oo_e2e_${process.pid}`;
  const url = `${PG_URL}?schema=${schema}`;
  const hook = await startSink(200, {});
  const dir = tempDir();
  // The race is about atomicity: a fail-open timeout that this saturated machine never trips, and a journal per replica.
  const cfg = (n: number) => {
    const p = join(dir.path, `c${n}.yaml`);
    writeFileSync(
      p,
      `failopen: { timeout_ms: 10000, journal_path: ${join(dir.path, `j${n}.db`)} }\nadapters: [ { name: hook, type: webhook, url: "${hook.url}/in" } ]\n`,
    );
    return p;
  };
  // Both start at once on a schema neither has made yet (they race to migrate it); one that fails must not
  // leave the other running, or this file hangs until its timeout instead of failing.
  const started = await Promise.allSettled([
    spawnServer(['--port', '0', '--store', url, '--config', cfg(1)]),
    spawnServer(['--port', '0', '--store', url, '--config', cfg(2)]),
  ]);
  const failed = started.find((x) => x.status === 'rejected');
  if (failed) {
    for (const x of started) if (x.status === 'fulfilled') await x.value.stop();
    await hook.close();
    dir.remove();
    throw failed.reason;
  }
  const [a, b] = started.map((x) => (x as PromiseFulfilledResult<Awaited<ReturnType<typeof spawnServer>>>).value);
  const admin = new pg.Pool({ connectionString: PG_URL, max: 1 });
  try {
    const keys = 1000;
    const copies = 50;
    const shots: Shot[] = [];
    for (let k = 0; k < keys; k++) for (let c = 0; c < copies; c++) shots.push({ url: `${(k + c) % 2 ? a!.url : b!.url}/v1/incidents`, body: incident(k) });
    const t0 = performance.now();
    const answers = await fire(shots, 64);
    const secs = (performance.now() - t0) / 1000;
    assert.equal(answers.filter((x) => x.status !== 200).length, 0, JSON.stringify(answers.find((x) => x.status !== 200)));
    const creates = answers.filter((x) => x.body.decision === 'CREATE');
    assert.equal(creates.length, keys, 'exactly one CREATE per key');
    assert.equal(new Set(creates.map((x) => x.body.dedup_key)).size, keys);
    const sum = async (re: RegExp) => (await metric(a!.url, re)) + (await metric(b!.url, re));
    const lost = await sum(/decision="SUPPRESS",reason="lost_race"\} (\d+)/);
    console.log(
      `postgres: ${shots.length} requests in ${secs.toFixed(1)} s (${Math.round(shots.length / secs)}/s over HTTP), ${creates.length} CREATE, ${lost} lost races, p99 ${pct(
        answers.map((x) => x.ms),
        99,
      ).toFixed(1)} ms`,
    );

    const upd = await fire(
      Array.from({ length: 40 }, (_, i) => ({ url: `${i % 2 ? a!.url : b!.url}/v1/incidents`, body: incident(7, 'CRITICAL') })),
      40,
    );
    assert.equal(upd.filter((x) => x.body.decision === 'UPDATE').length, 1);

    await until(
      () => hook.requests.length >= keys + 1,
      60_000,
      () => `${hook.requests.length} delivered`,
    );
    await caughtUp([a!, b!]);
    const perKey = new Map<string, number>();
    for (const r of hook.requests) perKey.set(`${r.body.key}:${r.body.action}`, (perKey.get(`${r.body.key}:${r.body.action}`) ?? 0) + 1);
    assert.equal(hook.requests.length, keys + 1, 'each create (and the one update) delivered exactly once across two workers');
    assert.ok([...perKey.values()].every((n) => n === 1));
    const { rows } = await admin.query(`SELECT count(*)::int AS n FROM "${schema}".incidents`);
    assert.equal(rows[0].n, keys);
  } finally {
    await Promise.all([a?.stop(), b?.stop()]);
    await hook.close();
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await admin.end();
    dir.remove();
  }
});

test('the committed schema dump (docs/schema/postgres.sql) is what the migrations make', () => {
  const r = spawnSync(process.execPath, ['scripts/pg-schema-dump.mjs', '--check'], { cwd: REPO_ROOT, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
});
