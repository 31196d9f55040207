// needs: redis postgres
import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { FakeServer } from '../fakes/http-fake.js';
import { BACKENDS, backendWithSink } from '../helpers/backends.js';
import { inProcessServer, type InProcessServer } from '../helpers/server.js';
import { caughtUp } from '../helpers/settle.js';
import { tempDir } from '../helpers/tmp.js';
import { until } from '../helpers/wait.js';
import { heartbeatIncidentKey, UNOPENED_CLAIM_MS } from '../../src/heartbeats/heartbeats.js';
import { basisOf } from '../../src/store/contract/index.js';

const S = 1000;
const KEY = heartbeatIncidentKey('nightly-backup');
const config = (hook: FakeServer) => `
heartbeats:
  - { name: nightly-backup, interval_seconds: 60, grace_seconds: 30, severity: CRITICAL }
adapters: [ { name: hook, type: webhook, url: "${hook.url}/in" } ]
`;
/** The monitor never checks on its own here: the test moves the clock and checks. */
const MANUAL = 3_600_000;

/** What the webhook received for the heartbeat's incident, in order. */
const sent = (hook: FakeServer) => hook.requests.filter((r) => r.body.key === KEY).map((r) => `${r.body.action}:${r.body.severity}`);
/**
 * Waits until the webhook has `expected` for the heartbeat's incident and nothing more arrives: every
 * replica's delivery worker has caught up since (two idle passes each).
 */
async function delivered(hook: FakeServer, expected: string[], replicas: InProcessServer[]) {
  await until(
    () => sent(hook).length >= expected.length || null,
    8000,
    () => `delivered: ${sent(hook).join(', ')}`,
  );
  await caughtUp(replicas);
  assert.deepEqual(sent(hook), expected);
}
const state = async (s: InProcessServer) => {
  const r = await s.get('/v1/heartbeats');
  assert.equal(r.status, 200);
  return r.body.find((h: { name: string }) => h.name === 'nightly-backup');
};

for (const backend of BACKENDS)
  describe(`heartbeats on ${backend}`, () => {
    let hook: FakeServer;
    let s: InProcessServer;
    const stores = backendWithSink(backend, (h) => (hook = h));
    beforeEach(async () => {
      hook.requests.length = 0;
      s = await inProcessServer({ store: await stores.fresh(), config: config(hook), heartbeatCheckMs: MANUAL });
    });
    afterEach(() => s.stop());

    test('never pinged: "never" until interval + grace after start-up, then one incident, kept open', async () => {
      await s.heartbeats.check(); // the first check enrols it (its deadline counts from here)
      assert.equal((await state(s)).state, 'never');
      assert.equal((await state(s)).last_ping_at, null);
      s.clock.advance(89 * S);
      await s.heartbeats.check();
      assert.equal((await state(s)).state, 'never', 'one second before its deadline');
      assert.equal((await s.get(`/v1/incidents/${KEY}`)).status, 404);
      s.clock.advance(1 * S);
      await s.heartbeats.check();
      assert.equal((await state(s)).state, 'missed');
      const inc = await s.get(`/v1/incidents/${KEY}`);
      assert.equal(inc.status, 200);
      assert.equal(inc.body.severity, 'CRITICAL');
      // Hours later, checked again and again: still the one incident, never re-decided.
      for (let i = 0; i < 5; i++) {
        s.clock.advance(3600 * S);
        await s.heartbeats.check();
      }
      const later = await s.get(`/v1/incidents/${KEY}`);
      assert.equal(later.status, 200, 'it outlives the incident TTL: it waits for a ping');
      assert.equal(later.body.refires, 0);
      await delivered(hook, ['create:CRITICAL'], [s]);
      const created = hook.requests.find((r) => r.body.key === KEY)!.body;
      assert.deepEqual(
        [created.kind, created.data.element_id, created.data.fault_class, created.data.root_cause_id],
        ['incident', 'nightly-backup', 'HEARTBEAT_MISSED', 'heartbeat'],
      );
      assert.match(created.summary, /nightly-backup missed: no ping for 90 s \(never pinged\)/);
    });

    test('pinged on time: never missed; late: one incident; the next ping closes it and reads ok', async () => {
      await s.heartbeats.check();
      for (let i = 0; i < 4; i++) {
        s.clock.advance(85 * S);
        assert.equal((await s.post('/v1/heartbeats/nightly-backup', {})).status, 202);
        await s.heartbeats.check();
        assert.equal((await state(s)).state, 'ok');
      }
      assert.equal((await s.get(`/v1/incidents/${KEY}`)).status, 404, 'on time: no incident');
      const lastPing = (await state(s)).last_ping_at;
      assert.equal(typeof lastPing, 'string');
      s.clock.advance(91 * S);
      await s.heartbeats.check();
      assert.equal((await state(s)).state, 'missed');
      assert.equal((await s.get(`/v1/incidents/${KEY}`)).status, 200);
      const pong = await s.post('/v1/heartbeats/nightly-backup', {});
      assert.equal(pong.status, 202);
      assert.equal(pong.body.state, 'ok');
      assert.equal((await s.get(`/v1/incidents/${KEY}`)).status, 404, 'the ping closed it');
      await s.heartbeats.check();
      assert.equal((await state(s)).state, 'ok');
      await delivered(hook, ['create:CRITICAL', 'close:CRITICAL'], [s]);
    });

    test('a claimed miss whose incident was never decided (its replica died in between) is opened once it has stayed so a while, once', async () => {
      await s.heartbeats.check();
      s.clock.advance(91 * S);
      const [rec] = await s.store.heartbeats.list('default');
      assert.equal(await s.store.heartbeats.claimMiss('default', 'nightly-backup', basisOf(rec!)), true, 'the claim of a replica that then died');
      assert.equal((await s.get(`/v1/incidents/${KEY}`)).status, 404);
      await s.heartbeats.check();
      assert.equal((await s.get(`/v1/incidents/${KEY}`)).status, 404, 'not at once: the claiming replica may be deciding it');
      s.clock.advance(UNOPENED_CLAIM_MS - 1);
      await s.heartbeats.check();
      assert.equal((await s.get(`/v1/incidents/${KEY}`)).status, 404, 'not before the claim has stayed unopened UNOPENED_CLAIM_MS');
      s.clock.advance(1);
      await s.heartbeats.check();
      assert.equal((await s.get(`/v1/incidents/${KEY}`)).status, 200, 'opened by this replica');
      await s.heartbeats.check();
      assert.equal((await s.get(`/v1/incidents/${KEY}`)).body.refires, 0, 'and only once');
    });

    test("Opsgenie's ping path and an unknown name: 202 as Opsgenie answers, 404 that changes nothing", async () => {
      const og = await s.app.inject({ method: 'GET', url: '/v2/heartbeats/nightly-backup/ping' });
      assert.equal(og.statusCode, 202);
      assert.equal(og.json().result, 'PONG - Heartbeat received');
      assert.equal((await state(s)).state, 'ok');
      const ogPost = await s.app.inject({ method: 'POST', url: '/v2/heartbeats/nightly-backup/ping' });
      assert.equal(ogPost.statusCode, 202);
      for (const url of ['/v1/heartbeats/weekly-backup', '/v2/heartbeats/weekly-backup/ping', '/v1/heartbeats/%00bad', `/v1/heartbeats/${'x'.repeat(5000)}`]) {
        const r = await s.app.inject({ method: 'POST', url });
        assert.equal(r.statusCode, 404, url);
        assert.equal(r.json().error.code, 'not_found');
      }
      assert.deepEqual(
        (await s.get('/v1/heartbeats')).body.map((h: { name: string }) => h.name),
        ['nightly-backup'],
        'an unknown name was not recorded',
      );
    });

    test('two replicas noticing one miss at the same moment open one incident', { skip: backend === 'memory' || backend === 'sqlite' }, async () => {
      await s.stop();
      const url = await stores.fresh();
      const [a, b] = await Promise.all([0, 1].map(() => inProcessServer({ store: url, config: config(hook), heartbeatCheckMs: MANUAL })));
      try {
        await a!.heartbeats.check();
        for (let round = 0; round < 3; round++) {
          for (const r of [a!, b!]) r.clock.advance(91 * S);
          await Promise.all([a!.heartbeats.check(), b!.heartbeats.check(), a!.heartbeats.check(), b!.heartbeats.check()]);
          assert.equal((await a!.get(`/v1/incidents/${KEY}`)).body.refires, 0, 'decided once');
          assert.equal((await b!.post('/v1/heartbeats/nightly-backup', {})).status, 202);
          assert.equal((await a!.get(`/v1/incidents/${KEY}`)).status, 404);
          // The round's create and close delivered before both clocks jump 91 s: a jump while a call is in
          // flight runs its lease out at once, and the other replica would send it again (a stall of 91 s,
          // which the receiver's Idempotency-Key absorbs; this test counts calls, not effects).
          await delivered(hook, Array.from({ length: round + 1 }, () => ['create:CRITICAL', 'close:CRITICAL']).flat(), [a!, b!]);
        }
      } finally {
        await Promise.all([a!.stop(), b!.stop()]);
        s = await inProcessServer({ store: await stores.fresh(), config: config(hook), heartbeatCheckMs: MANUAL });
      }
    });

    test('a restart during a miss neither forgets it nor opens a second; a restart after a ping invents none', { skip: backend === 'memory' }, async () => {
      const dir = tempDir();
      const url = backend === 'sqlite' ? `sqlite:${join(dir.path, 'kept.db')}` : await stores.fresh();
      await s.stop();
      let r = await inProcessServer({ store: url, config: config(hook), heartbeatCheckMs: MANUAL });
      try {
        await r.heartbeats.check();
        r.clock.advance(91 * S);
        await r.heartbeats.check();
        assert.equal((await state(r)).state, 'missed');
        const at = r.clock.now();
        await r.stop();
        r = await inProcessServer({ store: url, config: config(hook), heartbeatCheckMs: MANUAL, clockStart: at + 5 * S });
        await r.heartbeats.check();
        await r.heartbeats.check();
        assert.equal((await state(r)).state, 'missed', 'the restarted replica knows it is missed');
        assert.equal((await r.get(`/v1/incidents/${KEY}`)).body.refires, 0, 'and did not decide it again');
        assert.equal((await r.post('/v1/heartbeats/nightly-backup', {})).status, 202);
        assert.equal((await r.get(`/v1/incidents/${KEY}`)).status, 404);
        const pinged = r.clock.now();
        await r.stop();
        r = await inProcessServer({ store: url, config: config(hook), heartbeatCheckMs: MANUAL, clockStart: pinged + 30 * S });
        await r.heartbeats.check();
        assert.equal((await state(r)).state, 'ok', 'a restart does not reset the deadline to "never"');
        assert.equal((await r.get(`/v1/incidents/${KEY}`)).status, 404);
        await delivered(hook, ['create:CRITICAL', 'close:CRITICAL'], [r]);
      } finally {
        await r.stop();
        dir.remove();
        s = await inProcessServer({ store: await stores.fresh(), config: config(hook), heartbeatCheckMs: MANUAL });
      }
    });
  });
