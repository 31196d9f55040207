import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { CLI, postJson, runCli, spawnServer } from '../helpers/process.js';
import { tempDir } from '../helpers/tmp.js';

const run = promisify(execFile);
const fault = (i: number) => ({ element_id: `olt-${i}`, fault_class: 'LOS', root_cause_id: 'cut', severity: 'MAJOR' });

// A backup of a live SQLite store, taken while it decides, restores and serves: every key decided
// before the backup began is still live in the copy (its next arrival is a SUPPRESS, not a second ticket).
test('onceonly backup copies a SQLite store under load; the copy serves with every key decided before it began', async () => {
  const dir = tempDir();
  const live = join(dir.path, 'live.db');
  const copy = join(dir.path, 'copy.db');
  const s = await spawnServer(['--port', '0', '--store', `sqlite:${live}`]);
  let loading = true;
  try {
    const before = 300;
    for (let i = 0; i < before; i += 50) {
      const answers = await Promise.all(Array.from({ length: 50 }, (_, j) => postJson(`${s.url}/v1/incidents`, fault(i + j))));
      assert.ok(answers.every((a) => a.body.decision === 'CREATE'));
    }
    // Load that goes on through the backup: new keys, eight at a time.
    let next = before;
    const load = Promise.all(
      Array.from({ length: 8 }, async () => {
        while (loading) {
          const r = await postJson(`${s.url}/v1/incidents`, fault(next++));
          assert.equal(r.status, 200);
        }
      }),
    );
    const out = await run(process.execPath, [CLI, 'backup', '--store', `sqlite:${live}`, copy], { timeout: 60_000 });
    const during = next;
    loading = false;
    await load;
    assert.match(out.stdout, new RegExp(`^${copy.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: \\d+ pages copied from .*live\\.db \\(schema version \\d+\\)\\n$`));
    assert.ok(during > before, 'decisions went on while the backup ran');
    await s.stop();

    const restored = await spawnServer(['--port', '0', '--store', `sqlite:${copy}`]);
    try {
      assert.equal((await fetch(`${restored.url}/readyz`)).status, 200);
      const again = await Promise.all(Array.from({ length: before }, (_, i) => postJson(`${restored.url}/v1/incidents`, fault(i))));
      const counts: Record<string, number> = {};
      for (const a of again) counts[a.body.decision] = (counts[a.body.decision] ?? 0) + 1;
      assert.deepEqual(counts, { SUPPRESS: before }, 'every key decided before the backup is live in the copy');
      // A key never seen is a CREATE there, as anywhere.
      assert.equal((await postJson(`${restored.url}/v1/incidents`, fault(10_000_000))).body.decision, 'CREATE');
    } finally {
      await restored.stop();
    }
  } finally {
    loading = false;
    await s.stop('SIGKILL');
    dir.remove();
  }
});

test('onceonly backup refuses clearly and changes nothing: an existing file, another store, a missing or foreign source, no directory', () => {
  const dir = tempDir();
  try {
    const live = join(dir.path, 'live.db');
    const db = new Database(live);
    db.pragma('user_version = 1');
    db.exec('CREATE TABLE t (x)');
    db.close();
    const taken = join(dir.path, 'taken.db');
    writeFileSync(taken, 'mine');
    const before = statSync(taken).mtimeMs;

    const exists = runCli(['backup', '--store', `sqlite:${live}`, taken]);
    assert.equal(exists.status, 2);
    assert.equal(exists.stderr, `onceonly backup: ${taken} exists already: a backup never overwrites a file\n`);
    assert.equal(readFileSync(taken, 'utf8'), 'mine');
    assert.equal(statSync(taken).mtimeMs, before);

    const redis = runCli(['backup', '--store', 'redis://127.0.0.1:6379', join(dir.path, 'r.db')]);
    assert.equal(redis.status, 2);
    assert.match(redis.stderr, /only a sqlite: store is copied by this command/);

    const missing = runCli(['backup', '--store', `sqlite:${join(dir.path, 'nope.db')}`, join(dir.path, 'm.db')]);
    assert.equal(missing.status, 2);
    assert.match(missing.stderr, /nope\.db does not exist/);

    const foreign = join(dir.path, 'foreign.db');
    new Database(foreign).exec('CREATE TABLE t (x)');
    const notOurs = runCli(['backup', '--store', `sqlite:${foreign}`, join(dir.path, 'f.db')]);
    assert.equal(notOurs.status, 2);
    assert.match(notOurs.stderr, /foreign\.db is not an onceonly store/);
    assert.equal(existsSync(join(dir.path, 'f.db')), false, 'a refused copy leaves no file behind');

    // A dangling symlink at the target would send the copy wherever it points: refused, nothing made there.
    const pointed = join(dir.path, 'elsewhere.db');
    symlinkSync(pointed, join(dir.path, 'link.db'));
    const viaLink = runCli(['backup', '--store', `sqlite:${live}`, join(dir.path, 'link.db')]);
    assert.equal(viaLink.status, 2);
    assert.match(viaLink.stderr, /link\.db exists already: a backup never overwrites a file/);
    assert.equal(existsSync(pointed), false, 'nothing was written where the link points');

    // A copy holds every ticket's data: it is made readable by its owner only.
    const copy = join(dir.path, 'copy.db');
    const made = runCli(['backup', '--store', `sqlite:${live}`, copy]);
    assert.equal(made.status, 0, made.stderr);
    assert.equal(statSync(copy).mode & 0o777, 0o600);

    const noDir = runCli(['backup', '--store', `sqlite:${live}`, join(dir.path, 'no', 'such', 'dir.db')]);
    assert.equal(noDir.status, 2);
    assert.match(noDir.stderr, /^onceonly backup: cannot write .*dir\.db: /);

    const noFile = runCli(['backup', '--store', `sqlite:${live}`]);
    assert.equal(noFile.status, 2, 'the file is required');
  } finally {
    dir.remove();
  }
});
