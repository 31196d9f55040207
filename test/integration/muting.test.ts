// needs: redis postgres
import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startSink, type FakeServer } from '../fakes/http-fake.js';
import { BACKENDS, backendStores, storeKeepsItsOwnTime } from '../helpers/backends.js';
import { inProcessServer, type InProcessServer } from '../helpers/server.js';
import { caughtUp } from '../helpers/settle.js';
import { until } from '../helpers/wait.js';
import { MUTE_RECHECK_MS } from '../../src/delivery/worker.js';

const H = 3_600_000;
/** Nothing more arrives: the delivery worker has caught up since this call (two idle passes). */
const settle = (server: InProcessServer) => caughtUp(server);

// Each control on every backend: the held deliveries, their folds and
// releases, the silences and the inhibiting sources all live in the store.
for (const backend of BACKENDS)
  describe(backend, () => {
    const stores = backendStores(backend);
    before(() => stores.start());
    after(() => stores.stop());

    // Silences hold deliveries: the decision is made and recorded as ever; only
    // what goes out to the adapters waits, and when nothing mutes it any more the
    // key's latest state goes out once. The server runs on a manual clock: a held
    // delivery looks at its mutes again only when that clock has moved.
    describe(`muting on ${backend}: a silence holds deliveries and releases the latest state once`, () => {
      let s: InProcessServer;
      let hook: FakeServer;
      const incident = (element_id: string, fault_class: string, severity = 'MAJOR', cleared = false) => ({
        element_id,
        fault_class,
        root_cause_id: 'cut-7',
        severity,
        cleared,
      });
      /** What reached the adapter for an element's incident (a close carries only the key). */
      const sent = (element_id: string) =>
        hook.requests
          .filter((r) => r.body.data?.element_id === element_id || (r.body.action === 'close' && r.body.key === keys.get(element_id)))
          .map((r) => `${r.body.action}:${r.body.severity}`);
      const keys = new Map<string, string>();
      const silence = async (matchers: Array<[string, string, boolean?]>) => {
        const r = await s.post('/api/v2/silences', {
          matchers: matchers.map(([name, value, isRegex]) => ({ name, value, isRegex: isRegex === true, isEqual: true })),
          startsAt: new Date(s.clock.now()).toISOString(),
          endsAt: new Date(s.clock.now() + 2 * H).toISOString(),
          createdBy: 'noc',
          comment: 'planned work',
        });
        assert.equal(r.status, 200);
        return r.body.silenceID as string;
      };
      const metric = async (name: string) => {
        const text = await (await fetch(`${s.url}/metrics`)).text();
        return Number(new RegExp(`^${name.replace(/[{}"]/g, (c) => `\\${c}`)} (\\S+)$`, 'm').exec(text)?.[1] ?? 'NaN');
      };

      before(async () => {
        hook = await startSink(200, {});
      });
      after(() => hook.close());
      beforeEach(async () => {
        await s?.stop();
        hook.requests.length = 0;
        s = await inProcessServer({ store: await stores.fresh(), config: `adapters: [ { name: hook, type: webhook, url: "${hook.url}/in" } ]\n` });
      });
      after(() => s?.stop());

      test('muted keys are decided as ever and answer `muted`; their deliveries wait; the release sends the latest state once', async () => {
        const id = await silence([
          ['fault_class', 'LOS'],
          ['severity', 'MAJOR|CRITICAL', true],
        ]);
        const first = await s.post('/v1/incidents', incident('olt-1', 'LOS'));
        keys.set('olt-1', first.body.dedup_key);
        assert.deepEqual([first.body.decision, first.body.muted], ['CREATE', { by: 'silence', id }]);
        const other = await s.post('/v1/incidents', incident('olt-2', 'LOF'));
        assert.deepEqual([other.body.decision, other.body.muted], ['CREATE', null], 'what the silence does not match');
        assert.equal((await s.post('/v1/incidents', incident('olt-1', 'LOS'))).body.decision, 'SUPPRESS', 'deduplication goes on while muted');
        assert.equal((await s.post('/v1/incidents', incident('olt-1', 'LOS', 'CRITICAL'))).body.decision, 'UPDATE');
        await until(
          () => sent('olt-2').length === 1 || null,
          5000,
          () => 'the unmuted key was not delivered',
        );
        await settle(s);
        assert.deepEqual(sent('olt-1'), [], 'nothing of the muted key went out');
        assert.equal(await metric('onceonly_deliveries_held'), 1, 'one delivery held (the update waits behind it)');
        // The update folds into the held create when both were fanned out before the create was held. On a
        // loaded machine the create can be held first; the update then waits behind it, counted as lag, until
        // the create's recheck folds it in: move the clock to that recheck and wait for it.
        if ((await s.store.deliveries.backlog()).pending > 1) {
          s.clock.advance(MUTE_RECHECK_MS);
          await until(
            async () => (await s.store.deliveries.backlog()).pending === 1 || null,
            5000,
            () => 'the update was not folded into the held create',
          );
        }
        s.clock.advance(600); // the held one is not due again yet: its age must not read as lag
        assert.equal(await metric('onceonly_outbox_lag_seconds'), 0, 'a held delivery is not lag');
        assert.equal(await metric('onceonly_deliveries_muted_total{by="silence"}'), 1);

        assert.equal((await s.del(`/api/v2/silence/${id}`)).status, 200);
        s.clock.advance(1001);
        await until(
          () => sent('olt-1').length > 0 || null,
          5000,
          () => 'the key was not released',
        );
        await settle(s);
        assert.deepEqual(sent('olt-1'), ['create:CRITICAL'], 'one create, with the latest state (the update folded into it)');
        assert.equal(await metric('onceonly_deliveries_released_total'), 1);
        assert.equal(await metric('onceonly_deliveries_held'), 0);

        // A close of a key whose create went out always goes, even while muted.
        await silence([['fault_class', 'LOS']]);
        const key = first.body.dedup_key as string;
        assert.equal((await s.del(`/v1/incidents/${key}`)).status, 204);
        await until(
          () => sent('olt-1').length === 2 || null,
          5000,
          () => 'the close was held',
        );
        assert.deepEqual(sent('olt-1'), ['create:CRITICAL', 'close:CRITICAL']);
      });

      test('a key created and closed entirely while muted delivers nothing, and is counted', async () => {
        const id = await silence([['element_id', 'olt-9']]);
        const made = await s.post('/v1/incidents', incident('olt-9', 'LOS'));
        keys.set('olt-9', made.body.dedup_key);
        assert.deepEqual(made.body.muted, { by: 'silence', id });
        await settle(s);
        assert.equal((await s.del(`/v1/incidents/${made.body.dedup_key}`)).status, 204);
        s.clock.advance(1001);
        await settle(s);
        await s.del(`/api/v2/silence/${id}`);
        s.clock.advance(1001);
        await until(
          async () => (await metric('onceonly_deliveries_dropped_total{reason="created_and_closed_while_muted"}')) === 1 || null,
          5000,
          () => 'not counted',
        );
        await settle(s);
        assert.deepEqual(sent('olt-9'), [], 'neither the create nor the close went out');
        assert.equal(await metric('onceonly_deliveries_held'), 0);
        assert.equal(await metric('onceonly_deliveries_pending'), 0, 'nothing left waiting');
      });

      test('a silence made after the decision still holds the delivery (mutes are looked at when it is leased)', async () => {
        // The adapter fails first, so the create is still queued when the silence comes.
        let fail = true;
        hook.faults = () => (fail ? { status: 503 } : 'ok');
        const made = await s.post('/v1/incidents', incident('olt-5', 'LOS'));
        assert.equal(made.body.muted, null);
        await until(
          () => hook.requests.some((r) => r.body.data?.element_id === 'olt-5') || null,
          5000,
          () => 'never tried',
        );
        const id = await silence([['element_id', 'olt-5']]);
        fail = false;
        const tries = hook.requests.length;
        s.clock.advance(60_000); // past any backoff
        await until(
          async () => (await metric('onceonly_deliveries_held')) === 1 || null,
          5000,
          () => 'not held',
        );
        assert.equal(hook.requests.length, tries, 'held, not sent');
        await s.del(`/api/v2/silence/${id}`);
        s.clock.advance(1001);
        await until(
          () => sent('olt-5').filter((x) => x.startsWith('create')).length >= 2 || null,
          5000,
          () => 'not released',
        );
        hook.faults = () => 'ok';
      });
    });

    describe(`muting on ${backend}: maintenance windows from the config`, () => {
      let s: InProcessServer;
      let hook: FakeServer;
      const config = (withWindow: boolean) =>
        `adapters: [ { name: hook, type: webhook, url: "${hook.url}/in" } ]\n` +
        (withWindow
          ? `maintenance:\n  - name: ring-4\n    matchers: ['fault_class="LOS"', 'root_cause_id=~"ring-4.*"']\n    time_intervals:\n      - { times: [ { start_time: "02:00", end_time: "04:00" } ], weekdays: ["monday:friday"] }\n`
          : '');
      const creates = (element_id: string) => hook.requests.filter((r) => r.body.data?.element_id === element_id).length;

      before(async () => {
        hook = await startSink(200, {});
        s = await inProcessServer({ store: await stores.fresh(), config: config(true) });
      });
      after(async () => {
        await s.stop();
        await hook.close();
      });

      test('a key is muted while a window is in force; the window ending releases it; other keys and times pass', async () => {
        s.clock.set(Date.parse('2026-01-01T02:30:00Z')); // a Thursday
        const muted = await s.post('/v1/incidents', { element_id: 'ne-1', fault_class: 'LOS', root_cause_id: 'ring-4-span-2', severity: 'MAJOR' });
        assert.deepEqual(muted.body.muted, { by: 'maintenance', id: 'ring-4' });
        const other = await s.post('/v1/incidents', { element_id: 'ne-2', fault_class: 'LOS', root_cause_id: 'ring-5', severity: 'MAJOR' });
        assert.equal(other.body.muted, null, 'the matchers are ANDed');
        await until(
          () => creates('ne-2') === 1 || null,
          5000,
          () => 'the unmatched key was not delivered',
        );
        await settle(s);
        assert.equal(creates('ne-1'), 0, 'held while the window is in force');
        s.clock.set(Date.parse('2026-01-01T03:59:00Z'));
        await settle(s);
        assert.equal(creates('ne-1'), 0, 'still held at 03:59');
        s.clock.set(Date.parse('2026-01-01T04:00:00Z'));
        await until(
          () => creates('ne-1') === 1 || null,
          5000,
          () => 'the end of the window did not release the key',
        );
      });

      test('a SIGHUP reload that removes the window releases what it held', async () => {
        s.clock.set(Date.parse('2026-01-02T02:10:00Z')); // a Friday
        const muted = await s.post('/v1/incidents', { element_id: 'ne-3', fault_class: 'LOS', root_cause_id: 'ring-4', severity: 'MINOR' });
        assert.deepEqual(muted.body.muted, { by: 'maintenance', id: 'ring-4' });
        await settle(s);
        assert.equal(creates('ne-3'), 0);
        s.writeConfig(config(false));
        s.config.reload();
        s.clock.advance(1001);
        await until(
          () => creates('ne-3') === 1 || null,
          5000,
          () => 'the reload did not release the key',
        );
        const after = await s.post('/v1/incidents', { element_id: 'ne-4', fault_class: 'LOS', root_cause_id: 'ring-4', severity: 'MINOR' });
        assert.equal(after.body.muted, null);
      });
    });
    test(`inhibition on ${backend}: a live source mutes its targets; an ended source does not; a key matching both sides inhibits neither itself nor its peers`, async () => {
      const hook = await startSink(200, {});
      // Redis ends a source by its own expiry, on its own clock: there the TTL is 2 s and the test waits it out.
      const ownTime = storeKeepsItsOwnTime(backend);
      const ttl = ownTime ? 2 : 60;
      const s = await inProcessServer({
        store: await stores.fresh(),
        config:
          `adapters: [ { name: hook, type: webhook, url: "${hook.url}/in" } ]\nincidents: { ttl_seconds: ${ttl} }\n` +
          `inhibit_rules:\n  - { source_matchers: ['fault_class="NODE_DOWN"'], target_matchers: ['fault_class=~"NODE_DOWN|LINK_DOWN"'], equal: [root_cause_id] }\n`,
      });
      try {
        const src = await s.post('/v1/incidents', { element_id: 'n1', fault_class: 'NODE_DOWN', root_cause_id: 'rc', severity: 'CRITICAL' });
        assert.equal(src.body.muted, null, 'a key that is both source and target does not inhibit itself');
        const tgt = await s.post('/v1/incidents', { element_id: 'l1', fault_class: 'LINK_DOWN', root_cause_id: 'rc', severity: 'MAJOR' });
        assert.deepEqual(tgt.body.muted, { by: 'inhibition', id: src.body.dedup_key });
        const other = await s.post('/v1/incidents', { element_id: 'n2', fault_class: 'NODE_DOWN', root_cause_id: 'rc', severity: 'CRITICAL' });
        assert.equal(other.body.muted, null, 'as in Alertmanager: a key matching both sides is not inhibited by another that does');
        // Both NODE_DOWN incidents expire: on the test's clock, or (Redis) on Redis's, waited for.
        if (ownTime) await new Promise((r) => setTimeout(r, ttl * 1000 + 500));
        else s.clock.advance((ttl + 1) * 1000);
        const later = await s.post('/v1/incidents', { element_id: 'l2', fault_class: 'LINK_DOWN', root_cause_id: 'rc', severity: 'MAJOR' });
        assert.equal(later.body.muted, null, 'an ended source inhibits nothing');
        // Time goes on meanwhile: a busy machine's first look at the target may come after the jump,
        // hold it for the mute recheck on the test's clock, and release it only once that clock moves.
        await until(
          () => {
            if (!ownTime) s.clock.advance(250);
            return hook.requests.some((r) => r.body.data?.element_id === 'l1') || null;
          },
          5000,
          () => 'the target was not released when its source expired',
        );
      } finally {
        await s.stop();
        await hook.close();
      }
    });
  });
