import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startSink } from '../fakes/http-fake.js';
import { runCli } from '../helpers/process.js';
import { inProcessServer } from '../helpers/server.js';
import { tempDir } from '../helpers/tmp.js';

/**
 * `onceonly simulate` as a person runs it: a table per adapter, the keys
 * that differ with their first difference, `--json` as one object; and
 * every bad input one line on stderr, exit 2, with nothing read or made.
 */
test('onceonly simulate: the report in text and JSON; bad input is one line, exit 2, and creates no store', async () => {
  const hook = await startSink(200, {});
  const dir = tempDir();
  const s = await inProcessServer({ config: `adapters: [ { name: hook, type: webhook, url: "${hook.url}/in" } ]\n`, clockStart: Date.now() - 3_600_000 });
  try {
    for (const element_id of ['olt-7', 'olt-8']) {
      const r = await s.post('/v1/incidents', {
        element_id,
        fault_class: 'LOS',
        root_cause_id: 'cut-1',
        severity: 'MAJOR',
        labels: { team: element_id === 'olt-7' ? 'net' : 'db' },
      });
      assert.equal(r.status, 200);
    }
    for (let i = 0; i < 200 && hook.requests.length < 2; i++) await new Promise((r) => setTimeout(r, 25));
    assert.equal(hook.requests.length, 2);
    await s.close();
    const store = `sqlite:${join(s.dir, 'onceonly.db')}`;
    const config = join(dir.path, 'candidate.yaml');
    writeFileSync(config, `adapters: [ { name: hook, type: webhook, url: "${hook.url}/in" } ]\n`);

    const same = runCli(['simulate', '--config', config, '--store', store]);
    assert.equal(same.status, 0, same.stderr);
    assert.match(same.stdout, /^replayed 2 key\(s\) recorded from /);
    assert.match(same.stdout, /hook\s+2\s+0\s+0\s+0/);
    assert.match(same.stdout, /no key differs/);

    const muted = runCli(['simulate', '--config', config, '--store', store, '--since', '2h', '--silence', 'team="db"', '--json']);
    assert.equal(muted.status, 0, muted.stderr);
    const r = JSON.parse(muted.stdout);
    assert.deepEqual(r.keys, { replayed: 2, not_replayed: 0, differ: 1, approximate: 0 });
    assert.deepEqual(r.adapters.hook, {
      recorded: { created: 2, updated: 0, closed: 0, muted: 0 },
      candidate: { created: 1, updated: 0, closed: 0, muted: 1 },
    });
    assert.equal(r.differences[0].about, 'olt-8 · LOS');
    assert.match(r.differences[0].first, /^hook: 1st change was create, now create muted by silence /);

    const missing = join(dir.path, 'nothing.db');
    for (const [args, says] of [
      [['simulate', '--store', store], /--config is required/],
      [['simulate', '--config', join(dir.path, 'absent.yaml'), '--store', store], /absent\.yaml/],
      [['simulate', '--config', config, '--store', store, '--since', 'yesterday'], /--since: "yesterday" is not a duration/],
      [['simulate', '--config', config, '--store', store, '--silence', 'team'], /matcher/],
      [['simulate', '--config', config, '--store', `sqlite:${missing}`], /no store at/],
      [['simulate', '--config', config, '--store', 'mongodb://x'], /store URL/],
    ] as const) {
      const bad = runCli([...args]);
      assert.equal(bad.status, 2, `${args.join(' ')}: ${bad.stderr}`);
      assert.match(bad.stderr, says);
      assert.equal(bad.stderr.trim().split('\n').length, 1, bad.stderr);
      assert.equal(bad.stdout, '');
    }
    assert.equal(existsSync(missing), false, 'a store that is not there is not made');
  } finally {
    await s.stop();
    await hook.close();
    dir.remove();
  }
});
