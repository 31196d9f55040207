// needs: redis postgres
import { execFileSync } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startSink } from '../fakes/http-fake.js';
import { dropSchema, PG_URL } from '../helpers/postgres.js';
import { buildPreviousRelease } from '../helpers/previous-release.js';
import { postJson, REPO_ROOT, spawnServer, type ServerProcess } from '../helpers/process.js';
import { startRedis, type RedisServer } from '../helpers/redis.js';
import { tempDir } from '../helpers/tmp.js';
import { until } from '../helpers/wait.js';

const VERSION = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const HEAD = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: REPO_ROOT, encoding: 'utf8' }).trim();
const KEYS = 60;
const fault = (i: number, severity = 'MAJOR') => ({ element_id: `olt-${i}`, fault_class: 'LOS', root_cause_id: 'cut', severity });

// A rolling upgrade: the previous release (built from this repository's history) and this one serve
// one shared store together, then the old replica drains and goes. No key gets a second CREATE, no
// change is decided twice, and every create and update reaches the receiver exactly once.
// Built when the file loads, outside any test's time limit: an install of the previous release's
// dependencies, when they differ from this checkout's, takes minutes on a loaded machine.
const previous = buildPreviousRelease();

describe('a rolling upgrade: the previous release and this one on one store', () => {
  let redis: RedisServer;
  before(async () => {
    redis = await startRedis();
  });
  after(async () => {
    previous.remove();
    await redis?.stop();
  });

  const upgrade = async (store: string) => {
    // While the CHANGELOG says Unreleased, this code still carries the released version's number: the two
    // differ by their commit, and by their number once this code is a release itself.
    assert.notEqual(previous.commit, HEAD, 'the previous release is another build');
    if (!/^## Unreleased\b/m.test(readFileSync(join(REPO_ROOT, 'CHANGELOG.md'), 'utf8')))
      assert.notEqual(previous.version, VERSION, 'a release upgrades from another version');
    const sink = await startSink(200, {});
    const dir = tempDir();
    const replicas: ServerProcess[] = [];
    try {
      const serve = async (name: string, cli?: string) => {
        const config = join(dir.path, `${name}.yml`);
        writeFileSync(
          config,
          `adapters: [ { name: hook, type: webhook, url: "${sink.url}/in" } ]\nfailopen: { journal_path: ${join(dir.path, `${name}-journal.db`)} }\n`,
        );
        const s = await spawnServer(['--port', '0', '--store', store, '--config', config], {}, cli);
        replicas.push(s);
        return s;
      };
      const old = await serve('old', previous.cli);
      const current = await serve('new');
      const versionOf = async (s: ServerProcess) => /onceonly_build_info\{version="([^"]+)"/.exec(await (await fetch(`${s.url}/metrics`)).text())?.[1];
      assert.equal(await versionOf(current), VERSION);
      assert.equal(await versionOf(old), previous.version);

      // Both serve: each fault arrives once at each replica at the same moment, then changes at the other.
      const answers = await Promise.all(
        Array.from({ length: KEYS }, (_, i) => Promise.all([postJson(`${old.url}/v1/incidents`, fault(i)), postJson(`${current.url}/v1/incidents`, fault(i))])),
      );
      for (const [i, pair] of answers.entries()) {
        assert.deepEqual(
          pair.map((a) => a.status),
          [200, 200],
        );
        assert.deepEqual(pair.map((a) => a.body.decision).sort(), ['CREATE', 'SUPPRESS'], `olt-${i}: one CREATE across the two versions`);
      }
      const changes = await Promise.all(Array.from({ length: KEYS }, (_, i) => postJson(`${(i % 2 ? old : current).url}/v1/incidents`, fault(i, 'CRITICAL'))));
      assert.ok(
        changes.every((c) => c.body.decision === 'UPDATE'),
        'each change is an UPDATE, whichever version takes it',
      );

      // The old replica drains and goes; the new one goes on alone with what both decided.
      assert.equal(await old.stop('SIGTERM'), 0);
      const again = await Promise.all(Array.from({ length: KEYS }, (_, i) => postJson(`${current.url}/v1/incidents`, fault(i, 'CRITICAL'))));
      assert.ok(
        again.every((a) => a.body.decision === 'SUPPRESS'),
        'the keys both versions decided are live for the new one',
      );

      // Every create and every update reached the receiver, once each.
      const delivered = () => sink.requests.filter((r) => r.path === '/in').map((r) => `${r.body.key} ${r.body.action}`);
      await until(
        () => delivered().length >= 2 * KEYS,
        30_000,
        () => `${delivered().length} of ${2 * KEYS} deliveries arrived`,
      );
      await new Promise((r) => setTimeout(r, 500));
      const counts = new Map<string, number>();
      for (const d of delivered()) counts.set(d, (counts.get(d) ?? 0) + 1);
      assert.equal(counts.size, 2 * KEYS, 'a create and an update for each key');
      assert.deepEqual([...new Set(counts.values())], [1], 'none twice');
    } finally {
      for (const s of replicas) await s.stop('SIGKILL');
      await sink.close();
      dir.remove();
    }
  };

  test('on Redis', async () => {
    await upgrade(redis.url);
  });

  test('on Postgres', async () => {
    const schema = `upgrade_${randomBytes(4).toString('hex')}`;
    try {
      await upgrade(`${PG_URL}?schema=${schema}`);
    } finally {
      await dropSchema(schema);
    }
  });
});
