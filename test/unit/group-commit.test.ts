import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { GroupCommit } from '../../src/store/sqlite/group-commit.js';
import { tempDir } from '../helpers/tmp.js';

test('group commit: an operation that fails half way leaves nothing of its own, and its neighbours commit', async () => {
  const dir = tempDir();
  try {
    const db = new Database(join(dir.path, 'gc.db'));
    db.exec('CREATE TABLE t (k TEXT PRIMARY KEY)');
    const insert = db.prepare('INSERT INTO t (k) VALUES (?)');
    const writes = new GroupCommit(db);
    // Three operations in one batch (one turn of the event loop): the middle one writes, then fails.
    const results = await Promise.allSettled([
      writes.submit(() => insert.run('before')),
      writes.submit(() => {
        insert.run('half-way');
        throw new Error('failed after its first write');
      }),
      writes.submit(() => insert.run('after')),
    ]);
    assert.deepEqual(
      results.map((r) => r.status),
      ['fulfilled', 'rejected', 'fulfilled'],
    );
    assert.deepEqual(db.prepare('SELECT k FROM t ORDER BY k').pluck().all(), ['after', 'before']);
    db.close();
  } finally {
    dir.remove();
  }
});
