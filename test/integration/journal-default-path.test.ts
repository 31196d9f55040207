import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { systemClock } from '../../src/core/clock.js';
import { Journal } from '../../src/store/failopen/journal.js';
import { LEGACY_JOURNAL_PATH, openDefaultJournal, portJournalPath } from '../../src/store/failopen/journal-path.js';
import { tempDir } from '../helpers/tmp.js';

/** Runs `body` with the working directory in a fresh temporary one (the default paths are relative: ./data/…). */
async function inDir(body: (dir: string) => Promise<void>) {
  const dir = tempDir();
  const before = process.cwd();
  process.chdir(dir.path);
  try {
    await body(dir.path);
  } finally {
    process.chdir(before);
    dir.remove();
  }
}

test('with no journal_path, replicas on one host get a journal each, named by port', async () => {
  await inDir(async (dir) => {
    const a = openDefaultJournal(8081, systemClock);
    const b = openDefaultJournal(8082, systemClock);
    try {
      assert.deepEqual([a.path, b.path], [portJournalPath(8081), portJournalPath(8082)]);
      assert.ok(existsSync(join(dir, 'data', 'onceonly-journal-8081.db')) && existsSync(join(dir, 'data', 'onceonly-journal-8082.db')));
      // The same port twice is one replica started twice: refused, naming the file.
      assert.throws(() => openDefaultJournal(8081, systemClock), /onceonly-journal-8081\.db.*belongs to another running process/);
    } finally {
      await a.close();
      await b.close();
    }
  });
});

test('a journal an earlier release left at the old default is taken over by one replica, with its entries; the next gets its own', async () => {
  await inDir(async () => {
    mkdirSync('data');
    const old = new Journal(LEGACY_JOURNAL_PATH, systemClock, { own: true });
    await old.incidents.decide({ tenant: 'default', key: 'dedup:left-by-a-crash', fingerprint: 'MAJOR|0', ttlMs: 600_000 });
    await old.close();
    const first = openDefaultJournal(8081, systemClock);
    const second = openDefaultJournal(8082, systemClock);
    try {
      assert.equal(first.path, LEGACY_JOURNAL_PATH, 'the first replica keeps the old journal');
      assert.equal(first.size(), 1, 'and the entry it holds, to replay');
      assert.equal(second.path, portJournalPath(8082), 'the other, finding it taken, starts its own');
    } finally {
      await first.close();
      await second.close();
    }
    // Later starts: a replica whose own journal exists uses it; the other keeps the old one.
    const again = [openDefaultJournal(8082, systemClock), openDefaultJournal(8081, systemClock)];
    try {
      assert.deepEqual(
        again.map((j) => j.path),
        [portJournalPath(8082), LEGACY_JOURNAL_PATH],
      );
    } finally {
      for (const j of again) await j.close();
    }
  });
});

test('on port 0 (chosen at random) there is no stable name: the old default is the journal', async () => {
  await inDir(async () => {
    const j = openDefaultJournal(0, systemClock);
    try {
      assert.equal(j.path, LEGACY_JOURNAL_PATH);
    } finally {
      await j.close();
    }
  });
});
