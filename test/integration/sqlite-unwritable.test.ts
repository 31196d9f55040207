import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { inProcessServer, type InProcessServer } from '../helpers/server.js';

/**
 * What a decision writes: a refused request must leave all of it as it was.
 * `queued` is outbox plus deliveries, as fan-out moves entries from one to
 * the other at any time (one adapter: one row either way).
 */
function rows(s: InProcessServer) {
  const db = (s.store as SqliteStore).database;
  const n = (sql: string) => (db.prepare(sql).get() as { n: number }).n;
  return {
    incidents: n('SELECT count(*) AS n FROM incidents'),
    queued: n('SELECT (SELECT count(*) FROM outbox) + (SELECT count(*) FROM deliveries) AS n'),
    windows: n('SELECT count(*) AS n FROM windows'),
    devices: n('SELECT count(*) AS n FROM devices'),
    events: n('SELECT count(*) AS n FROM events_seen'),
  };
}

const incident = (i: number) => ({
  element_id: `olt-${i}`,
  fault_class: 'LOS',
  root_cause_id: 'cut',
  severity: 'MAJOR',
  // Large enough that a few new incidents need new pages.
  details: { note: 'x'.repeat(8000) },
});
const event = (seq: number) => ({
  tenant_id: 'default',
  device_id: 'pos-1',
  boot_id: 'b1',
  sequence: seq,
  state: seq % 2 ? 'RUN' : 'IDLE',
  observed_at: '2026-12-01T00:00:00Z',
});

async function inject(s: InProcessServer, url: string, body: unknown) {
  const r = await s.app.inject({ method: 'POST', url, payload: body as object });
  return { status: r.statusCode, retryAfter: r.headers['retry-after'], body: JSON.parse(r.payload) as { error?: { code: string; message: string } } };
}

// A webhook nobody answers, retried only after an hour: deliveries stay queued, so the outbox is observable.
const CONFIG = 'delivery: { base_delay_ms: 3600000, max_delay_ms: 3600000 }\nadapters: [ { name: hook, type: webhook, url: "http://127.0.0.1:9/nobody" } ]\n';

test('a full disk answers 503 with Retry-After, turns /readyz 503, keeps nothing of the refused request, and recovers when space returns', async () => {
  const s = await inProcessServer({ store: 'sqlite', config: CONFIG });
  const db = (s.store as SqliteStore).database;
  try {
    assert.equal((await inject(s, '/v1/incidents', incident(0))).status, 200);
    // The disk is full: the file may not grow past the pages it has now (SQLite's own cap stands in for the disk).
    db.pragma(`max_page_count = ${db.pragma('page_count', { simple: true })}`);
    let refused: Awaited<ReturnType<typeof inject>> | null = null;
    let i = 1;
    let before = rows(s);
    for (; i < 200 && !refused; i++) {
      before = rows(s);
      const r = await inject(s, '/v1/incidents', incident(i));
      if (r.status !== 200) refused = r;
    }
    assert.ok(refused, 'the capped file filled up');
    const failed = i - 1;
    assert.equal(refused.status, 503);
    assert.equal(refused.body.error?.code, 'unavailable');
    assert.match(refused.body.error!.message, /SQLITE_FULL.*full/);
    assert.equal(refused.retryAfter, '5', 'the producer is told when to retry');
    assert.deepEqual(rows(s), before, 'nothing of the refused decision was written: no incident, no outbox entry, no delivery');
    // Many at once share one group-commit transaction: each is stored whole or not at all.
    const burst = await Promise.all(Array.from({ length: 20 }, (_, k) => inject(s, '/v1/incidents', incident(1000 + k))));
    const stood = burst.filter((r) => r.status === 200).length;
    assert.equal(burst.filter((r) => r.status === 503).length + stood, 20, 'every answer is a decision or a 503');
    const after = rows(s);
    assert.equal(after.incidents, before.incidents + stood, 'one incident row per answered CREATE, none for a 503');
    assert.equal(after.queued, before.queued + stood, 'one queued delivery per answered CREATE, none for a 503');
    const ready = await s.app.inject({ method: 'GET', url: '/readyz' });
    assert.equal(ready.statusCode, 503, '/readyz reports the store cannot write');
    assert.match(ready.payload, /cannot write/);

    // Space comes back: readiness returns by itself, and the retry is decided as if first sent.
    db.pragma('max_page_count = 1073741823');
    assert.equal((await s.app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200);
    const again = await inject(s, '/v1/incidents', incident(failed));
    assert.equal(again.status, 200);
    assert.equal((again.body as unknown as { decision: string }).decision, 'CREATE', 'the refused request left no trace: its retry creates');
  } finally {
    await s.stop();
  }
});

test('a read-only file answers 503 with Retry-After and /readyz 503 until writes work again; reads still answer', async () => {
  const s = await inProcessServer({ store: 'sqlite', config: CONFIG });
  const db = (s.store as SqliteStore).database;
  try {
    const first = await inject(s, '/v1/incidents', incident(0));
    assert.equal(first.status, 200);
    const key = (first.body as unknown as { dedup_key: string }).dedup_key;
    // The file (or its mount) turns read-only; as root a chmod would not stop writes, SQLite's query_only does.
    db.pragma('query_only = ON');
    const before = rows(s);
    const r = await inject(s, '/v1/incidents', incident(1));
    assert.equal(r.status, 503);
    assert.match(r.body.error!.message, /SQLITE_READONLY.*read-only/);
    assert.equal(r.retryAfter, '5');
    assert.equal((await inject(s, '/v1/events', event(1))).status, 503, 'device events are refused alike');
    assert.equal(
      (await inject(s, '/v1/violations', { process_id: 'etch', rule_id: 'nelson_1', timestamp: 1770000000, value: 13, center: 10, ucl: 12, lcl: 8 })).status,
      503,
    );
    assert.deepEqual(rows(s), before);
    assert.equal((await s.app.inject({ method: 'GET', url: '/readyz' })).statusCode, 503);
    const read = await s.app.inject({ method: 'GET', url: `/v1/incidents/${key}` });
    assert.equal(read.statusCode, 200, `what is stored can still be read: ${read.payload}`);

    db.pragma('query_only = OFF');
    assert.equal((await s.app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200);
    assert.equal((await inject(s, '/v1/incidents', incident(1))).status, 200);
  } finally {
    await s.stop();
  }
});
