// needs: redis postgres
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { GENERATION, MIN_READER } from '../../src/store/contract/generation.js';
import { READER_KEY } from '../../src/store/redis/keys.js';
import { PG_URL } from '../helpers/postgres.js';
import { CLI, REPO_ROOT, spawnServer } from '../helpers/process.js';
import { startRedis } from '../helpers/redis.js';

/** `onceonly serve` on a store, expected to refuse: its exit code and what it printed. */
function refusedStart(store: string) {
  const r = spawnSync(process.execPath, [CLI, 'serve', '--port', '0', '--store', store], {
    cwd: REPO_ROOT,
    env: { ...process.env, LOG_LEVEL: 'info' },
    encoding: 'utf8',
    timeout: 30_000,
  });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

// A store written by a newer onceonly in a layout this one would misread stops this one at start,
// with the reason, before it writes anything; a store of its own generation is marked as such.
test('Redis: a replica starts and marks the keys with the generation its writes need; one that cannot read what is marked refuses', async () => {
  const redis = await startRedis();
  try {
    const s = await spawnServer(['--port', '0', '--store', redis.url]);
    assert.equal(redis.cli('GET', READER_KEY), String(MIN_READER));
    await s.stop();

    redis.cli('SET', READER_KEY, String(GENERATION + 1));
    const keysBefore = redis.cli('DBSIZE');
    const r = refusedStart(redis.url);
    assert.equal(r.status, 2, r.output);
    assert.match(
      r.output,
      new RegExp(
        `this Redis has been written by a newer onceonly in a layout this one would misread \\(it needs layout generation ${GENERATION + 1}; this one reads ${GENERATION}\\): upgrade this replica`,
      ),
    );
    assert.ok(!/listening on/.test(r.output), 'it never served');
    assert.equal(redis.cli('GET', READER_KEY), String(GENERATION + 1), 'the mark is left as it was');
    assert.equal(redis.cli('DBSIZE'), keysBefore, 'nothing was written');
  } finally {
    await redis.stop();
  }
});

test('Postgres: the same on a schema', async () => {
  const schema = `newer_${randomBytes(4).toString('hex')}`;
  const url = `${PG_URL}?schema=${schema}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  try {
    const s = await spawnServer(['--port', '0', '--store', url]);
    const held = async () => (await admin.query(`SELECT min_reader FROM ${schema}.reader_generation`)).rows.map((r) => r.min_reader);
    assert.deepEqual(await held(), [MIN_READER]);
    await s.stop();

    await admin.query(`UPDATE ${schema}.reader_generation SET min_reader = $1`, [GENERATION + 1]);
    const r = refusedStart(url);
    assert.equal(r.status, 2, r.output);
    assert.match(r.output, new RegExp(`Postgres schema ${schema} has been written by a newer onceonly in a layout this one would misread`));
    assert.ok(!/listening on/.test(r.output), 'it never served');
    assert.deepEqual(await held(), [GENERATION + 1], 'the mark is left as it was');
  } finally {
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
  }
});
