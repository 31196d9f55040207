// needs: redis postgres
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { systemClock } from '../../src/core/clock.js';
import { FailOpenStore, StoreUnavailableError } from '../../src/store/failopen/fail-open-store.js';
import { Journal } from '../../src/store/failopen/journal.js';
import { openPool } from '../../src/store/postgres/pool.js';
import { PgStore } from '../../src/store/postgres/pg-store.js';
import { freshSchema, PG_URL } from '../helpers/postgres.js';
import { freePort } from '../helpers/redis.js';
import { tempDir } from '../helpers/tmp.js';

/** A TCP proxy to the machine's Postgres that the test can cut and restore, without touching the server others use. */
async function cuttableProxy(target: URL) {
  const port = await freePort();
  const sockets = new Set<Socket>();
  let server: Server | null = null;
  const up = () =>
    new Promise<void>((resolve) => {
      server = createServer((client) => {
        const upstream = connect(Number(target.port || 5432), target.hostname);
        for (const s of [client, upstream]) {
          sockets.add(s);
          s.on('close', () => sockets.delete(s));
          s.on('error', () => s.destroy());
        }
        client.pipe(upstream).pipe(client);
      }).listen(port, '127.0.0.1', () => resolve());
    });
  await up();
  return {
    url: (_schema: string) => {
      const u = new URL(PG_URL);
      u.port = String(port);
      return `${u.toString().replace(/\?.*$/, '')}`;
    },
    async cut() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
    },
    restore: up,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
    },
  };
}

const claim = (i: number) => ({ tenant: 'default', key: `dedup:${i.toString(16).padStart(32, '0')}`, fingerprint: 'MAJOR|0', ttlMs: 600_000 });

test('fail-open on Postgres: decisions go on provisionally while it is cut away, and the replay claims or merges each once', async () => {
  const schema = await freshSchema();
  const proxy = await cuttableProxy(new URL(PG_URL));
  const dir = tempDir();
  const outcomes: string[] = [];
  let recovered!: () => void;
  const back = new Promise<void>((r) => (recovered = r));
  let degradedSeen = false;
  const store = new FailOpenStore(
    new PgStore(openPool(proxy.url(schema.schema), schema.schema, 4), systemClock, { schema: schema.schema }),
    new Journal(join(dir.path, 'journal.db'), systemClock),
    systemClock,
    {
      timeoutMs: 300,
      probeIntervalMs: 50,
      events: {
        reconciled: (o) => outcomes.push(o),
        degraded: (d) => {
          if (d) degradedSeen = true;
          else if (degradedSeen) recovered();
        },
      },
    },
  );
  try {
    await store.init();
    assert.equal((await store.incidents.decide(claim(0))).outcome.kind, 'created', 'key 0 decided on Postgres before the cut');

    await proxy.cut();
    for (let i = 0; i <= 10; i++) {
      const r = await store.incidents.decide(claim(i));
      assert.equal(r.provisional, true, `key ${i} decided in the journal`);
    }
    await assert.rejects(store.ping(), StoreUnavailableError);
    await assert.rejects(store.incidents.close('default', claim(1).key), StoreUnavailableError, 'a close must reach Postgres');

    await proxy.restore();
    await back;
    assert.deepEqual(
      { claimed: outcomes.filter((o) => o === 'claimed').length, merged: outcomes.filter((o) => o === 'merged').length },
      { claimed: 10, merged: 1 },
    );
    for (let i = 0; i <= 10; i++) assert.ok(await store.incidents.get('default', claim(i).key), `key ${i} is live once`);
    const zero = await store.incidents.get('default', claim(0).key);
    assert.equal(zero!.refires, 1, 'the provisional CREATE of key 0 counted as one more arrival');
    const after = await store.incidents.decide(claim(5));
    assert.deepEqual([after.provisional, after.outcome.kind], [undefined, 'unchanged']);
  } finally {
    await store.close();
    await proxy.close();
    await schema.drop();
    dir.remove();
  }
});
