import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { manualClock, type ManualClock } from '../../src/core/clock.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { SqliteDb } from '../../src/store/sqlite/sqlite-db.js';
import { Checkpointer, WAL_PAGES } from '../../src/store/sqlite/checkpointer.js';
import { SQL } from '../../src/store/sqlite/sqlite-deliveries.js';
import { openStore, StoreUrlError } from '../../src/store/open.js';
import { tempDir } from '../helpers/tmp.js';
import { until } from '../helpers/wait.js';
import { GRACE_UNITS, type StoreFixture } from './incident-store.contract.js';
import { everyFacetContract } from './every-facet.js';
import { rulesContract } from './rules.contract.js';

const unit = 1000;
/** A fresh file per test, with a second connection on it as the peer. */
const fixture = (clock: ManualClock): StoreFixture => {
  const dir = tempDir();
  const path = join(dir.path, 'store.db');
  const options = { expiredGraceMs: GRACE_UNITS * unit };
  return {
    store: new SqliteStore(path, clock, options),
    openPeer: () => new SqliteStore(path, clock, options),
    clock,
    unit,
    advance: async (ms) => clock.advance(ms),
    cleanup: dir.remove,
  };
};

everyFacetContract('sqlite', { peers: true, sweepsOnClock: true }, fixture);
rulesContract('sqlite', fixture);

/** A test on a SQLite file of its own (at `file` inside a fresh directory), removed after. */
async function onFile(file: string, run: (path: string, clock: ManualClock) => Promise<void>) {
  const dir = tempDir();
  try {
    await run(join(dir.path, file), manualClock());
  } finally {
    dir.remove();
  }
}

/** One transaction of `count` 64 KiB rows, written past the group commit straight on the connection. */
function writeBlobs(store: SqliteStore, count: number) {
  const insert = store.database.prepare('INSERT INTO write_probe (pad) VALUES (zeroblob(65536))');
  store.database.transaction(() => {
    for (let i = 0; i < count; i++) insert.run();
  })();
}

test('sqlite: decisions survive reopening the file', () =>
  onFile('nested/store.db', async (path, clock) => {
    const first = new SqliteStore(path, clock, { synchronous: 'full' });
    await first.incidents.decide({ tenant: 't', key: 'k', fingerprint: 'MAJOR|0', ttlMs: 60_000 });
    await first.close();
    const second = new SqliteStore(path, clock);
    const r = await second.incidents.decide({ tenant: 't', key: 'k', fingerprint: 'MAJOR|0', ttlMs: 60_000 });
    assert.equal(r.outcome.kind, 'unchanged');
    await second.close();
  }));

test('sqlite: history rows past their time are read by no one and go with the sweep; a run kept alive by its repeats stays', () =>
  onFile('store.db', async (path, clock) => {
    const store = new SqliteStore(path, clock);
    const rows = () => (store.database.prepare('SELECT count(*) AS n FROM history').get() as { n: number }).n;
    const limits = { maxEvents: 50, keepMs: 1000 };
    const t0 = clock.now();
    const at = (key: string, dt: number, fold?: string) => ({
      tenant: 't',
      key,
      event: { at: t0 + dt, type: 'decision', decision: fold ? 'SUPPRESS' : 'CREATE' },
      ...(fold ? { fold } : {}),
    });
    // "old": a CREATE, then a SUPPRESS run its repeats keep alive; "gone": one CREATE, never again.
    await store.history.append([at('old', 0), at('gone', 0), at('old', 100, 's')], limits);
    // A repeat after both CREATEs are past their time (1000 ms) keeps the run alive.
    clock.advance(1100);
    await store.history.append([at('old', 1100, 's')], limits);
    clock.advance(400);
    assert.deepEqual(
      (await store.history.read('t', 'old')).map((e) => e.decision),
      ['SUPPRESS'],
      "the CREATE is past its time; the run's last arrival keeps it",
    );
    assert.deepEqual(await store.history.read('t', 'gone'), []);
    await store.sweepExpired();
    assert.equal(rows(), 1, 'the sweep took the two rows past their time');
    await store.close();
  }));

test('sqlite: the WAL stays bounded under writes that never pause (checkpointed, then restarted)', () =>
  onFile('store.db', async (path, clock) => {
    const store = new SqliteDb(path, clock);
    const insert = store.db.prepare('INSERT INTO write_probe (pad) VALUES (zeroblob(65536))');
    const clear = store.db.prepare('DELETE FROM write_probe');
    let largest = 0;
    // 512 MiB of writes, eight times the WAL's threshold, one 4 MiB commit
    // after another through the group commit, as the store writes: far more
    // than any server writes.
    for (let commit = 0; commit < 128; commit++) {
      await store.writes.submit(() => {
        for (let i = 0; i < 64; i++) insert.run();
        clear.run();
      });
      largest = Math.max(largest, statSync(`${path}-wal`).size);
    }
    // The automatic checkpoint at WAL_PAGES restarts the WAL; without it the
    // WAL would hold every page written. Past twice that (journal_size_limit)
    // the writer restarts it itself, so it can pass that by one commit.
    const bound = 2 * WAL_PAGES * 4096 + 64 * 17 * 4096;
    assert.ok(largest <= bound, `the WAL reached ${largest} bytes (bound ${bound})`);
    assert.ok(largest > 4 * 1024 * 1024, `the WAL never grew (${largest} bytes): the writes did not reach it`);
    await store.close();
    assert.equal(existsSync(`${path}-wal`), false, 'the last connection to close removes the WAL');
  }));

test('sqlite: committed pages reach the database file from the checkpoint worker, not the writing thread', () =>
  onFile('store.db', async (path, clock) => {
    const store = new SqliteStore(path, clock);
    assert.equal(store.database.pragma('temp_store', { simple: true }), 2, 'savepoint journals are kept in memory');
    assert.equal(store.database.pragma('wal_autocheckpoint', { simple: true }), WAL_PAGES);
    assert.equal(store.database.pragma('journal_size_limit', { simple: true }), 2 * WAL_PAGES * 4096);
    const before = statSync(path).size;
    // 2 MiB, far below the writing connection's own checkpoint threshold:
    // only another connection checkpointing moves it into the file.
    writeBlobs(store, 32);
    await until(
      () => statSync(path).size >= before + 2 * 1024 * 1024,
      10_000,
      () => `the file stayed at ${statSync(path).size} bytes (was ${before})`,
    );
    await store.close();
  }));

test('sqlite: a checkpoint worker that cannot run says so once, comes back when it can, and the writer still bounds the WAL', () =>
  onFile('store.db', async (path) => {
    const problems: string[] = [];
    // No such file: the worker's connection fails as it opens (fileMustExist), as on a broken disk.
    const missing = join(path, '..', 'missing.db');
    const gone = new Checkpointer(missing, 1, { respawnMs: 50, onProblem: (e) => problems.push(e.message) });
    await until(
      () => problems.length > 0 || null,
      10_000,
      () => 'the worker never said it stopped',
    );
    assert.match(problems[0]!, /^SQLite checkpoint worker: it stopped \(SQLITE_CANTOPEN\); checkpoints run on the writing thread meanwhile$/);
    assert.equal(gone.status().workerUp, false);
    // Tried again every 50 ms, failing quietly, until the file is there.
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(problems.length, 1, `one line for the failure, not one per try: ${problems.join('; ')}`);
    new Database(missing).close();
    await until(
      () => gone.status().workerUp || null,
      10_000,
      () => 'no new worker came up',
    );
    assert.equal(gone.status().workerUp, true, 'a new worker started once the file could be opened');
    await gone.stop();

    // The writer's own bound: past the limit (here 1 byte), a committed batch restarts the WAL.
    const db = new Database(path);
    db.pragma('journal_mode = WAL');
    db.exec('CREATE TABLE t (pad BLOB)');
    db.prepare('INSERT INTO t VALUES (zeroblob(65536))').run();
    const before = statSync(path).size;
    const writer = new Checkpointer(path, 1, { intervalMs: 3_600_000, onProblem: (e) => problems.push(e.message) });
    writer.afterCommit(db);
    assert.equal(writer.status().writerRestarts, 1);
    assert.ok(statSync(path).size > before, 'the restart copied the WAL into the file');
    assert.equal(writer.status().workerUp, true);
    await writer.stop();
    db.close();
    assert.equal(problems.length, 1, `an orderly stop is no problem: ${problems.join('; ')}`);
  }));

test('store URLs: clear errors for what is not a usable store', () => {
  const clock = manualClock();
  assert.throws(() => openStore('sqlite:', clock), StoreUrlError);
  assert.throws(() => openStore('sqlite:./x.db?synchronous=sometimes', clock), /normal or full/);
  assert.throws(() => openStore('sqlite:./x.db?journal=off', clock), /unknown/);
  assert.throws(() => openStore('postgres://127.0.0.1/test?schema=Bad-Name', clock), /schema="Bad-Name" must be lower-case/);
  assert.throws(() => openStore('postgres://', clock), /not a valid postgres:\/\/ URL/);
  assert.throws(() => openStore('postgres://127.0.0.1', clock), /give a host and a database/);
  assert.throws(() => openStore('redis+cluster://', clock), /not recognised/);
  assert.throws(() => openStore('mongodb://x', clock), /not recognised/);
});

// Planted fault it catches: migration 014 without its index (the lease walked the line in text order).
test('sqlite: a long line of one key, its ids crossing a digit, leases its oldest and every other key at once, by index', () =>
  onFile('store.db', async (path, clock) => {
    const store = new SqliteStore(path, clock);
    // A second connection on the file, to write the outbox as decisions would and to ask for the plan.
    const db = new Database(path);
    try {
      // Outbox ids are the fan-out order: one group's 5,500 queued updates, 7000 to 12499 (their text
      // sorts '10000' before '9999'), then one delivery each for 500 other keys.
      const put = db.prepare(
        `INSERT INTO outbox (id, tenant, kind, action, key, severity, summary, data, at) VALUES (?, 'heavy', ?, ?, ?, 'MAJOR', '', '{}', 0)`,
      );
      db.transaction(() => {
        for (let id = 7000; id < 12_500; id++) put.run(id, 'group', id === 7000 ? 'create' : 'update', 'rc-storm');
        for (let i = 0; i < 500; i++) put.run(20_000 + i, 'incident', 'create', `k${i}`);
      })();
      assert.equal(await store.deliveries.fanOut(['tickets'], 10_000), 6000);
      const leased = await store.deliveries.leaseDue('w', 60_000, 1000);
      assert.deepEqual(
        leased.map((d) => d.id).sort(),
        ['7000.tickets', ...Array.from({ length: 500 }, (_, i) => `${20_000 + i}.tickets`)].sort(),
        "the line's oldest and each other key's one: nothing newer of the line",
      );
      assert.deepEqual(await store.deliveries.leaseDue('w', 60_000, 1000), [], 'the rest of the line waits on its head');
      // The "older one?" question is a probe of the line index; through (kind, tenant, key) it walked
      // the line in text order, and this lease took 2.5 s.
      const plan = db
        .prepare(`EXPLAIN QUERY PLAN ${SQL.leaseDue}`)
        .all(0, '', 0, 1)
        .map((r) => (r as { detail: string }).detail);
      assert.ok(
        plan.some((d) => /USING (COVERING )?INDEX deliveries_line \(kind=\? AND tenant=\? AND key=\? AND adapter=\? AND <expr><\?\)/.test(d)),
        plan.join('\n'),
      );
    } finally {
      db.close();
      await store.close();
    }
  }));
