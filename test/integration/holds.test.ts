// needs: redis postgres
import { afterEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { FakeServer } from '../fakes/http-fake.js';
import { BACKENDS, backendWithSink } from '../helpers/backends.js';
import { inProcessServer, type InProcessServer } from '../helpers/server.js';
import { caughtUp } from '../helpers/settle.js';
import { until } from '../helpers/wait.js';

const S = 1000;
const incident = (element_id: string, fault_class: string, severity = 'MAJOR') => ({ element_id, fault_class, root_cause_id: 'cut-7', severity });
/** Nothing more arrives: the delivery worker has caught up since this call (two idle passes). */
const settle = (server: InProcessServer) => caughtUp(server);

// Auto-pause and flapping hold deliveries in the store, as mutes do: on every
// backend, on a manual clock (a held delivery is looked at again only when the
// clock reaches its time).
for (const backend of BACKENDS)
  describe(`auto-pause and flapping on ${backend}`, () => {
    let hook: FakeServer;
    let s: InProcessServer | undefined;
    const stores = backendWithSink(backend, (h) => (hook = h));
    afterEach(async () => {
      await s?.stop();
      s = undefined;
      hook.requests.length = 0;
    });
    const serve = async (extra: string) => {
      s = await inProcessServer({ store: await stores.fresh(), config: `adapters: [ { name: hook, type: webhook, url: "${hook.url}/in" } ]\n${extra}` });
      return s;
    };
    const sentFor = (key: string) =>
      hook.requests.filter((r) => r.body.key === key).map((r) => `${r.body.action}:${r.body.severity}${r.body.data?.flapping ? ':flapping' : ''}`);
    const metric = async (name: string) => {
      const text = await (await fetch(`${s!.url}/metrics`)).text();
      return Number(new RegExp(`^${name.replace(/[{}"]/g, (c) => `\\${c}`)} (\\S+)$`, 'm').exec(text)?.[1] ?? 'NaN');
    };

    test('auto-pause: a matching create waits its seconds; closed meanwhile it delivers nothing; others go at once', async () => {
      const srv = await serve(`auto_pause: [ { matchers: ['fault_class="LOS"'], seconds: 120 } ]\n`);
      const transient = (await srv.post('/v1/incidents', incident('olt-1', 'LOS'))).body.dedup_key as string;
      const lasting = (await srv.post('/v1/incidents', incident('olt-2', 'LOS'))).body.dedup_key as string;
      const other = (await srv.post('/v1/incidents', incident('olt-3', 'LOF'))).body.dedup_key as string;
      await until(
        () => sentFor(other).length === 1 || null,
        5000,
        () => 'the key no rule matches was not delivered at once',
      );
      await settle(srv);
      assert.deepEqual([sentFor(transient), sentFor(lasting)], [[], []], 'both LOS creates wait');
      assert.equal(await metric('onceonly_deliveries_muted_total{by="auto_pause"}'), 2);
      assert.deepEqual((await srv.get('/v1/dashboard')).body.delivery.holds, { auto_pause: 2 }, 'the dashboard shows them');
      srv.clock.advance(60 * S);
      assert.equal((await srv.del(`/v1/incidents/${transient}`)).status, 204, 'the transient fault clears by itself');
      assert.equal((await srv.post('/v1/incidents', incident('olt-2', 'LOS', 'CRITICAL'))).body.decision, 'UPDATE');
      await settle(srv);
      assert.deepEqual([sentFor(transient), sentFor(lasting)], [[], []], 'still waiting at 60 s');
      srv.clock.advance(61 * S);
      await until(
        () => sentFor(lasting).length === 1 || null,
        5000,
        () => 'the pause did not end',
      );
      await settle(srv);
      assert.deepEqual(sentFor(lasting), ['create:CRITICAL'], 'one create, with the latest state');
      assert.deepEqual(sentFor(transient), [], 'created and closed inside its pause: nothing at all');
      assert.equal(await metric('onceonly_deliveries_dropped_total{reason="created_and_closed_while_muted"}'), 1);
      // Once its create went out, a key's close goes at once.
      assert.equal((await srv.del(`/v1/incidents/${lasting}`)).status, 204);
      await until(
        () => sentFor(lasting).length === 2 || null,
        5000,
        () => 'the close did not go',
      );
      assert.deepEqual(sentFor(lasting), ['create:CRITICAL', 'close:CRITICAL']);
    });

    /** Opens and closes one key every 30 s on the server's clock, waiting for the worker after each change. */
    const flap = async (srv: InProcessServer, changes: number, stepMs: number) => {
      let key = '';
      for (let i = 0; i < changes; i++) {
        if (i % 2 === 0) key = (await srv.post('/v1/incidents', incident('link-9', 'LINK_DOWN', i % 4 === 0 ? 'MAJOR' : 'MINOR'))).body.dedup_key;
        else assert.equal((await srv.del(`/v1/incidents/${key}`)).status, 204);
        await settle(srv);
        if (i < changes - 1) srv.clock.advance(stepMs);
      }
      return key;
    };

    test('flapping: after more than max_transitions reopens its creates and closes wait; once quiet, the last state goes once, marked', async () => {
      const srv = await serve('flapping: { max_transitions: 4, window_seconds: 600, quiet_seconds: 300 }\n');
      // 21 changes, 30 s apart: open, then closed and opened again ten times (it ends open).
      const key = await flap(srv, 21, 30 * S);
      const before = ['create:MAJOR', 'close:MAJOR', 'create:MINOR', 'close:MINOR'];
      // Reopens 1..4 go as ever; the fifth makes it flapping, and from there on everything waits.
      assert.deepEqual(sentFor(key), [...before, ...before, 'create:MAJOR', 'close:MAJOR']);
      assert.ok((await metric('onceonly_deliveries_muted_total{by="flapping"}')) >= 1);
      assert.ok((await srv.get('/v1/dashboard')).body.delivery.holds.flapping >= 1, 'the dashboard shows it');
      srv.clock.advance(299 * S);
      await settle(srv);
      assert.equal(sentFor(key).length, 10, 'not quiet long enough yet');
      srv.clock.advance(2 * S);
      await until(
        () => sentFor(key).length === 11 || null,
        8000,
        () => `delivered: ${sentFor(key).join(', ')}`,
      );
      await settle(srv);
      assert.deepEqual(sentFor(key).slice(10), ['create:MAJOR:flapping'], 'its settled state, once, marked flapping');
      assert.equal((await srv.get(`/v1/incidents/${key}`)).status, 200, 'and it is open');
    });

    test('a key flapping 20 times in 10 minutes, with auto-pause and flapping as documented, makes at most 2 deliveries', async () => {
      const srv = await serve(`auto_pause: [ { matchers: ['fault_class="LINK_DOWN"'], seconds: 120 } ]
flapping: { max_transitions: 4, window_seconds: 600, quiet_seconds: 300 }
`);
      // 41 changes 15 s apart: open, then closed and reopened 20 times inside 10 minutes.
      const key = await flap(srv, 41, 15 * S);
      srv.clock.advance(301 * S);
      await until(
        () => sentFor(key).length >= 1 || null,
        8000,
        () => 'its settled state never went out',
      );
      srv.clock.advance(600 * S);
      await settle(srv);
      const sent = sentFor(key);
      assert.ok(sent.length <= 2, sent.join(', '));
      assert.deepEqual(sent, ['create:MAJOR:flapping'], 'every short-lived open was paused away; the settled one goes once');
    });
  });
