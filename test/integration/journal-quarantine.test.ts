// needs: postgres
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { systemClock } from '../../src/core/clock.js';
import { FailOpenStore, REPLAY_TRIES } from '../../src/store/failopen/fail-open-store.js';
import { Journal } from '../../src/store/failopen/journal.js';
import { JournalInUseError } from '../../src/store/failopen/journal-lock.js';
import { freshSchema } from '../helpers/postgres.js';
import { tempDir } from '../helpers/tmp.js';
import { until } from '../helpers/wait.js';

const run = promisify(execFile);
const CLI = join(import.meta.dirname, '../../dist/cli/main.js');
const claim = (key: string) => ({ tenant: 'acme', key, fingerprint: 'MAJOR|0', ttlMs: 600_000 });
const good = (i: number) => `dedup:${i.toString(16).padStart(32, '0')}`;
/** Postgres refuses NUL in text (SQLSTATE 22021): an entry it can never take, whatever is retried. */
const POISON = 'dedup:poison\u0000key';

/** A journal left by an outage: `bad` unreplayable entries among good ones, as if the replica had crashed. */
async function leftJournal(path: string, goods: number): Promise<void> {
  const j = new Journal(path, systemClock);
  await j.incidents.decide(claim(good(0)));
  await j.incidents.decide(claim(POISON));
  for (let i = 1; i < goods; i++) await j.incidents.decide(claim(good(i)));
  await j.close();
}

test('an entry the store refuses is quarantined after a few tries; the entries behind it replay, and the replica is ready after one pass', async () => {
  const schema = await freshSchema();
  const dir = tempDir();
  const path = join(dir.path, 'journal.db');
  await leftJournal(path, 5);
  const outcomes: string[] = [];
  const quarantined: string[] = [];
  const store = new FailOpenStore(schema.open(systemClock), new Journal(path, systemClock, { own: true }), systemClock, {
    probeIntervalMs: 50,
    timeoutMs: 1000,
    events: { reconciled: (o) => outcomes.push(o), quarantined: (e, error) => quarantined.push(`${e.key} ${error}`) },
  });
  try {
    assert.equal(store.isDegraded, true, 'a journal left with entries degrades the replica at start');
    await until(
      () => !store.isDegraded,
      15_000,
      () => `still degraded; outcomes so far ${outcomes.join(',')}`,
    );
    await store.ping();
    assert.deepEqual(
      { claimed: outcomes.filter((o) => o === 'claimed').length, quarantined: outcomes.filter((o) => o === 'quarantined').length },
      { claimed: 5, quarantined: 1 },
      'the five good entries reached Postgres; the poison one was set aside once',
    );
    for (let i = 0; i < 5; i++) assert.ok(await store.inner.incidents.get('acme', good(i)), `good entry ${i} is in Postgres`);
    const [q] = store.journal.quarantined();
    assert.ok(q, 'the refused entry is kept, not lost');
    assert.equal(q.key, POISON);
    assert.match(q.error, /0x00|invalid byte sequence|null character/i, 'the reason is the store’s own');
    assert.equal(store.journal.quarantinedCount(), 1);
    assert.equal(store.journal.size(), 0, 'a quarantined entry does not count as waiting: it cannot hold the replica degraded');
    assert.equal(quarantined.length, 1);
    assert.equal(REPLAY_TRIES >= 2, true);

    // `journal list` beside the running replica: SQLite serialises the two.
    const listed = await run(process.execPath, [CLI, 'journal', 'list', '--journal', path, '--json']);
    const body = JSON.parse(listed.stdout) as { quarantined: Array<{ id: string; key: string; error: string }>; waiting: number };
    assert.deepEqual(
      body.quarantined.map((e) => e.key),
      [POISON],
    );
    assert.equal(body.waiting, 0);

    // `journal retry`: the healthy replica replays it within a few watch ticks, and it is refused again.
    const before = outcomes.length;
    const retried = await run(process.execPath, [CLI, 'journal', 'retry', body.quarantined[0]!.id, '--journal', path]);
    assert.match(retried.stdout, /put back for replay: 1/);
    await until(
      () => outcomes.length > before,
      10_000,
      () => 'the retried entry was not replayed while healthy',
    );
    assert.deepEqual(outcomes.slice(before), ['quarantined']);
    assert.equal(store.isDegraded, false, 'a retry is replayed without degrading the replica');
    assert.equal(store.journal.quarantinedCount(), 1);

    // A mistyped id changes nothing and says so; `drop --all` removes it for good.
    await assert.rejects(run(process.execPath, [CLI, 'journal', 'drop', 'q-0000000000000000', '--journal', path]), (e: { code: number; stderr: string }) => {
      assert.equal(e.code, 1);
      assert.match(e.stderr, /not quarantined/);
      return true;
    });
    assert.equal(store.journal.quarantinedCount(), 1);
    const dropped = await run(process.execPath, [CLI, 'journal', 'drop', '--all', '--journal', path]);
    assert.match(dropped.stdout, /dropped: 1/);
    assert.equal(store.journal.quarantinedCount(), 0);
  } finally {
    await store.close();
    await schema.drop();
    dir.remove();
  }
});

test('a journal belongs to one process: a second owner is refused and the path named; the lock goes with its owner', async () => {
  const dir = tempDir();
  const path = join(dir.path, 'journal.db');
  const first = new Journal(path, systemClock, { own: true });
  try {
    assert.throws(
      () => new Journal(path, systemClock, { own: true }),
      (e: Error) => e instanceof JournalInUseError && e.message.includes(path) && /journal_path/.test(e.message),
    );
    // A second process too (the lock is the operating system's, not this process's memory).
    await assert.rejects(
      run(process.execPath, [
        '--import',
        'tsx',
        '-e',
        `import { Journal } from ${JSON.stringify(join(import.meta.dirname, '../../src/store/failopen/journal.ts'))}; new Journal(${JSON.stringify(path)}, { now: () => Date.now() }, { own: true });`,
      ]),
      (e: { stderr: string }) => e.stderr.includes('belongs to another running process') && e.stderr.includes(path),
    );
    // Reading it without owning it (the operator's commands) is fine.
    const reader = new Journal(path, systemClock);
    assert.equal(reader.size(), 0);
    await reader.close();
  } finally {
    await first.close();
  }
  const again = new Journal(path, systemClock, { own: true });
  await again.close();
  dir.remove();
});

test("a provisional create's route stays with its journal entry: in the replay batch, through quarantine and retry, and when restored", async () => {
  const dir = tempDir();
  const j = new Journal(join(dir.path, 'journal.db'), systemClock);
  try {
    const routed = { ...claim(good(1)), outbox: { severity: 'MAJOR', summary: '', data: {}, route: ['noc', 'pager'] } };
    await j.decideRemembering(routed);
    await j.incidents.decide(claim(good(2)));
    const taken = await j.takeBatch(10);
    assert.deepEqual(taken.map((r) => [r.key, r.route]).sort(), [
      [good(1), ['noc', 'pager']],
      [good(2), undefined],
    ]);
    assert.deepEqual(j.parked().find((r) => r.key === good(1))?.route, ['noc', 'pager']);
    await j.quarantine(taken.find((r) => r.key === good(1))!, 'refused');
    const [q] = j.quarantined();
    assert.deepEqual([q?.key, q?.route], [good(1), ['noc', 'pager']]);
    await j.releaseQuarantined([q!.id], 'retry');
    assert.deepEqual(j.parked().find((r) => r.key === good(1))?.route, ['noc', 'pager'], 'a retried entry is replayed with its route');
    // A repeat in the same outage, its entry out for replay: the key is restored from the journal's memory.
    assert.equal((await j.decideRemembering(routed)).outcome.kind, 'unchanged');
    assert.deepEqual((await j.incidents.get('acme', good(1)))?.route, ['noc', 'pager'], 'a key restored in the same outage keeps its route');
    assert.deepEqual(j.restoredClaim((await j.incidents.get('acme', good(1)))!)?.outbox?.route, ['noc', 'pager']);
  } finally {
    await j.close();
    dir.remove();
  }
});
