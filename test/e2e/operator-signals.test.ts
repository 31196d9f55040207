// needs: postgres
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { schemaVersions } from '../../src/store/schema-versions.js';
import { dropSchema, PG_URL } from '../helpers/postgres.js';
import { REPO_ROOT, spawnServer } from '../helpers/process.js';
import { tempDir } from '../helpers/tmp.js';
import { until } from '../helpers/wait.js';

const VERSION = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const TOKEN = 'acme-token-0123456789abcdef';
const PASSWORD = 'pg-Passw0rd-never-logged';

/** A replica says what it runs: its first log line, build_info, and its reloads taken and refused. */
test('the first log line names the version, the store (password masked), adapters and tenants; reloads are counted', async () => {
  const dir = tempDir();
  const schema = `signals_${randomBytes(4).toString('hex')}`;
  const u = new URL(PG_URL);
  u.password = PASSWORD;
  u.searchParams.set('schema', schema);
  const config = join(dir.path, 'onceonly.yml');
  const good = `adapters: [ { name: desk, type: webhook, url: "http://127.0.0.1:9/in" } ]\ntenants: [ { id: acme, tokens: ["${TOKEN}"] } ]\n`;
  writeFileSync(config, good);
  const s = await spawnServer(['--port', '0', '--store', u.toString(), '--config', config]);
  try {
    const first = JSON.parse(s.lines[0]!) as Record<string, unknown>;
    assert.equal(first.msg, `onceonly ${VERSION} starting`);
    assert.equal(first.version, VERSION);
    assert.equal(first.node, process.version);
    assert.equal(first.store, `postgres://postgres:***@${u.host}${u.pathname}?schema=${schema}`);
    assert.deepEqual(first.adapters, [{ name: 'desk', type: 'webhook' }]);
    assert.deepEqual(first.tenants, ['acme']);
    assert.equal(first.config, config);
    assert.match(s.lines[1]!, /listening on /);
    assert.ok(!s.lines.join('\n').includes(PASSWORD) && !s.stderr().includes(PASSWORD), 'the password is in no log line');

    const metrics = async () => (await fetch(`${s.url}/metrics`)).text();
    const value = (text: string, series: string) => Number(new RegExp(`^${series.replace(/[{}"]/g, '\\$&')} (\\S+)$`, 'm').exec(text)?.[1]);
    const before = await metrics();
    const { sqlite, postgres } = schemaVersions();
    // The server runs dist/: the commit its build wrote there.
    const COMMIT = (JSON.parse(readFileSync(join(REPO_ROOT, 'dist', 'build-info.json'), 'utf8')) as { commit: string }).commit;
    assert.match(COMMIT, /^[0-9a-f]{12}$/);
    assert.equal(
      value(
        before,
        `onceonly_build_info{version="${VERSION}",commit="${COMMIT}",sqlite_schema="${sqlite}",postgres_schema="${postgres}",node="${process.version}"}`,
      ),
      1,
    );
    assert.equal(value(before, 'onceonly_config_reload_total{result="success"}'), 0);
    assert.equal(value(before, 'onceonly_config_reload_total{result="failure"}'), 0);
    const loadedAt = value(before, 'onceonly_config_last_reload_success_timestamp_seconds');
    assert.ok(Math.abs(loadedAt - Date.now() / 1000) < 120, `loaded at start (${loadedAt})`);

    // A good reload is taken; a bad one is refused and counted, and the server goes on with the config it had.
    s.proc.kill('SIGHUP');
    await until(async () => value(await metrics(), 'onceonly_config_reload_total{result="success"}') === 1, 10_000);
    assert.ok(value(await metrics(), 'onceonly_config_last_reload_success_timestamp_seconds') >= loadedAt);
    writeFileSync(config, `${good}incidents: { ttl_seconds: 0 }\n`);
    s.proc.kill('SIGHUP');
    await until(async () => value(await metrics(), 'onceonly_config_reload_total{result="failure"}') === 1, 10_000);
    const after = await metrics();
    assert.equal(value(after, 'onceonly_config_reload_total{result="success"}'), 1);
    const r = await fetch(`${s.url}/v1/incidents`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
      body: JSON.stringify({ element_id: 'olt-7', fault_class: 'LOS', root_cause_id: 'cut', severity: 'MAJOR' }),
    });
    assert.equal(r.status, 200, 'still serving on the config it had');
  } finally {
    await s.stop();
    await dropSchema(schema);
    dir.remove();
  }
});
