// needs: redis postgres
/**
 * A replica failing open numbers its journal's deliveries of a key from 1:
 * it cannot know how many the store already sent. An update it sent itself
 * would carry a number the store had used for that key (update:1 after the
 * store's update:3), and a receiver that deduplicates by Idempotency-Key, as
 * the webhook contract invites, would drop the newer severity. The journal
 * holds its updates while the store is away and the replay hands them to the
 * store, which numbers them after its own. Found by the nemesis on a
 * Postgres crash; made here on purpose, on a store cut off by a proxy.
 *
 * The replay must then send the held state even when the store already had
 * it (another replica raised it there): the journal's provisional create
 * reached the receiver after the store's update, and would otherwise be the
 * receiver's last word (nemesis seed 50004).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startFake } from '../fakes/http-fake.js';
import { startFaultProxy } from '../helpers/fault-proxy.js';
import pg from 'pg';
import { PG_URL } from '../helpers/postgres.js';
import { startRedis } from '../helpers/redis.js';
import { tempDir } from '../helpers/tmp.js';
import { until } from '../helpers/wait.js';
import { startReplicas } from './harness.js';

const fault = (severity: string) => ({ element_id: 'olt-numbering', fault_class: 'LINK_DOWN', root_cause_id: 'uplink-9', severity });

/** A store behind a fault proxy, fresh for one test. */
async function storeBehindProxy(store: 'redis' | 'postgres') {
  if (store === 'redis') {
    const redis = await startRedis();
    const proxy = await startFaultProxy(`127.0.0.1:${redis.port}`);
    return { proxy, url: `redis://${proxy.address}`, timeoutMs: 300, stop: () => redis.stop() };
  }
  const schema = `oo_numbering_${process.pid}_${Date.now() % 1e8}`;
  const base = new URL(PG_URL);
  const proxy = await startFaultProxy(`${base.hostname}:${base.port || 5432}`);
  return {
    proxy,
    url: `postgres://${base.username}@${proxy.address}${base.pathname}?schema=${schema}`,
    timeoutMs: 1000,
    stop: async () => {
      const admin = new pg.Client({ connectionString: PG_URL });
      await admin.connect();
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await admin.end();
    },
  };
}

const cases = [
  // The store's last state before the outage differs from the journal's last: the replay's merge is a change.
  { store: 'redis', onStore: ['MINOR', 'CRITICAL', 'MAJOR'] },
  // The store already had the journal's last state: the merge changes nothing, and must still send it.
  { store: 'redis', onStore: ['MINOR', 'MAJOR', 'CRITICAL'] },
  { store: 'postgres', onStore: ['MINOR', 'MAJOR', 'CRITICAL'] },
] as const;

for (const { store, onStore } of cases)
  test(`${store}, the store's last state ${onStore.at(-1)}: a journal's update never reuses an Idempotency-Key the store sent, and its state arrives last`, async () => {
    const backend = await storeBehindProxy(store);
    const proxy = backend.proxy;
    const receiver = await startFake(() => ({ status: 200, body: {} }));
    const dir = tempDir('onceonly-numbering-');
    const replicas = await startReplicas(
      1,
      backend.url,
      dir.path,
      `adapters: [ { name: hook, type: webhook, url: "${receiver.url}/in", timeout_ms: 2000 } ]\ndelivery: { base_delay_ms: 50, max_delay_ms: 500 }\n`,
      backend.timeoutMs,
    );
    const url = replicas.urls[0]!;
    const post = (severity: string) =>
      fetch(`${url}/v1/incidents`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(fault(severity)) });
    const send = async (severity: string) => {
      const r = await post(severity);
      assert.equal(r.status, 200, await r.clone().text());
      return (await r.json()) as { decision: string; provisional: boolean };
    };
    const ids = () => receiver.requests.map((r) => String(r.headers['idempotency-key']));
    const arrived = (suffix: string) =>
      until(
        () => ids().some((id) => id.endsWith(suffix)),
        30_000,
        () => `waiting for ${suffix}; the receiver has ${ids().join(', ')}`,
      );
    try {
      // On the store: a create and three updates.
      assert.equal((await send('MAJOR')).decision, 'CREATE');
      for (const [i, s] of onStore.entries()) {
        assert.equal((await send(s)).decision, 'UPDATE');
        await arrived(`:update:${i + 1}`);
      }
      // The store goes away: the replica fails open. Its journal has never seen the key.
      proxy.blackhole();
      // Until it fails open, a call may still be answered by the store, or refused 503 (a call past its deadline fails alone).
      let first = { decision: '', provisional: false };
      await until(
        async () => {
          const r = await post('INFO');
          if (r.status === 200) first = (await r.json()) as typeof first;
          else assert.equal(r.status, 503, await r.text());
          return first.provisional;
        },
        30_000,
        () => 'the replica never failed open',
      );
      assert.equal(first.decision, 'CREATE', 'the journal answers a key it never saw as new: a fault must page while the store is away');
      const raised = await send('CRITICAL');
      assert.deepEqual([raised.decision, raised.provisional], ['UPDATE', true]);
      await new Promise((r) => setTimeout(r, 1500)); // time for the journal to send what it would
      // The store comes back; the replay hands the journal's update to the store.
      proxy.heal({ dropConnections: true });
      await until(
        async () => (await fetch(`${url}/readyz`)).status === 200,
        30_000,
        () => 'the replica never came back to the store',
      );
      // A delivery whose settle the outage cut off is sent again with its own Idempotency-Key (at least once,
      // the receiver deduplicates): what counts is each key's first arrival, as a deduplicating receiver sees it.
      const firsts = () => {
        const seen = new Set<string>();
        return receiver.requests.filter((r) => {
          const id = String(r.headers['idempotency-key']);
          return !seen.has(id) && seen.add(id);
        });
      };
      const numbered = (r: { headers: Record<string, unknown> }) => Number(/:update:(\d+)$/.exec(String(r.headers['idempotency-key']))?.[1] ?? 0);
      const raisedSent = () => firsts().find((r) => numbered(r) > onStore.length && (r.body as { severity?: string }).severity === 'CRITICAL');
      await until(
        () => raisedSent() !== undefined,
        30_000,
        () => `the raised severity never arrived as an update numbered after the store's update:3; the receiver has ${ids().join(', ')}`,
      );
      await new Promise((r) => setTimeout(r, 1000)); // anything late would arrive by now
      console.log(
        `receiver, in arrival order: ${receiver.requests.map((r) => `${String(r.headers['idempotency-key']).split(':').slice(-2).join(':')} ${(r.body as { severity?: string }).severity}`).join(', ')}`,
      );
      // One state per update Idempotency-Key: one the receiver had seen never comes back with another.
      // (A provisional create does carry the store's create:1: a receiver that deduplicates by it sees one create.)
      const bodies = new Map<string, string>();
      for (const r of receiver.requests.filter((x) => (x.body as { action?: string }).action === 'update')) {
        const id = String(r.headers['idempotency-key']);
        const sev = String((r.body as { severity?: string }).severity);
        assert.equal(
          bodies.get(id) ?? sev,
          sev,
          `${id} came as ${bodies.get(id)} and then as ${sev}: a deduplicating receiver dropped the second (${ids().join(', ')})`,
        );
        bodies.set(id, sev);
      }
      // The receiver's last word, deduplicated, is the raised severity, and the updates came numbered in order.
      assert.equal(firsts().at(-1), raisedSent(), `the last new Idempotency-Key is the raised update (${ids().join(', ')})`);
      const updates = firsts()
        .map(numbered)
        .filter((n) => n > 0);
      assert.deepEqual(
        updates.filter((n, i) => i > 0 && n <= updates[i - 1]!),
        [],
        `updates in order of first arrival: ${updates.join(', ')}`,
      );
    } finally {
      await replicas.stop();
      await proxy.close();
      await receiver.close();
      await backend.stop();
      dir.remove();
    }
  });
