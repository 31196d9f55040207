// needs: redis postgres
import { afterEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FakeServer } from '../fakes/http-fake.js';
import { BACKENDS, backendWithSink, storeKeepsItsOwnTime } from '../helpers/backends.js';
import { inProcessServer, type InProcessServer } from '../helpers/server.js';
import { caughtUp } from '../helpers/settle.js';
import { until } from '../helpers/wait.js';

// The NOC's queue takes every incident; nobody acknowledging it for 2 s pages the on-call, and 2 s more
// the duty manager. (Seconds, not minutes: Redis keeps the escalation's time on its own clock, which no
// test clock moves, so on Redis the test waits for real.)
const config = (hook: FakeServer) => `
adapters:
  - { name: noc, type: webhook, url: "${hook.url}/noc" }
  - { name: pager, type: webhook, url: "${hook.url}/pager" }
  - { name: duty, type: webhook, url: "${hook.url}/duty" }
route:
  receiver: noc
  escalate: [ { after: 2s, to: [pager] }, { after: 2s, to: [duty] } ]
`;
const incident = (element_id: string) => ({ element_id, fault_class: 'LOS', root_cause_id: 'cut', severity: 'CRITICAL' });
/** How long a step may take to reach its receiver before the test fails: a guard, not a measure (a loaded machine, a retried store call). */
const WAIT_MS = 30_000;

for (const backend of BACKENDS)
  describe(`escalation on ${backend}`, () => {
    let hook: FakeServer;
    let server: InProcessServer | null = null;
    const stores = backendWithSink(backend, (h) => (hook = h));
    afterEach(async () => {
      await server?.stop();
      server = null;
      hook.requests.length = 0;
    });
    const at = (path: string, key: string) => hook.requests.filter((r) => r.path === path && r.body.key === key).map((r) => r.body);
    /** Time passes: the test clock moves, and on a store that keeps its own time, real time too. */
    const pass = async (s: InProcessServer, ms: number) => {
      s.clock.advance(ms);
      if (storeKeepsItsOwnTime(backend)) await sleep(ms);
    };
    const start = async () => {
      server = await inProcessServer({ store: await stores.fresh(), config: config(hook) });
      return server;
    };
    /**
     * Waits until the key's escalation has waited `n` times (its history's `held` by escalation), so a
     * clock move cannot race the wait: a wait reckoned before the move but written after it would be
     * due past the moved clock, which a manual clock never reaches.
     */
    const waited = (s: InProcessServer, key: string, n: number) =>
      until(
        async () => {
          const events = ((await s.get(`/v1/incidents/${key}/history`)).body?.events ?? []) as Array<Record<string, unknown>>;
          return events.filter((e) => e.type === 'held' && e.by === 'escalation').length >= n || null;
        },
        WAIT_MS,
        () => `the escalation of ${key} never waited ${n} time(s)`,
      );
    const create = async (s: InProcessServer, el: string) => {
      const r = await s.post('/v1/incidents', incident(el));
      assert.equal(r.body.decision, 'CREATE');
      const key = r.body.dedup_key as string;
      await until(
        () => at('/noc', key).length === 1 || null,
        10_000,
        () => 'the create never reached the NOC',
      );
      return key;
    };

    test('nobody acknowledges: each step pages its adapters once, in turn; the close reaches every page it opened', async () => {
      const s = await start();
      const key = await create(s, 'olt-1');
      await waited(s, key, 1);
      await caughtUp(s);
      assert.deepEqual(at('/pager', key), [], 'no step before its time');
      await pass(s, 2500);
      await until(
        () => at('/pager', key).length === 1 || null,
        WAIT_MS,
        () => 'step 1 never paged',
      );
      await caughtUp(s);
      assert.deepEqual(at('/duty', key), [], 'step 2 waits its own 2 s');
      const paged = at('/pager', key)[0]!;
      assert.deepEqual([paged.action, paged.severity, paged.data.escalation, paged.data.element_id], ['create', 'CRITICAL', 1, 'olt-1']);
      await waited(s, key, 2);
      await pass(s, 2500);
      await until(
        () => at('/duty', key).length === 1 || null,
        WAIT_MS,
        () => 'step 2 never paged',
      );
      await pass(s, 5000);
      await caughtUp(s);
      assert.deepEqual(
        ['/noc', '/pager', '/duty'].map((p) => at(p, key).map((b) => `${b.action}${b.data.escalation ?? ''}`)),
        [['create'], ['create1'], ['create2']],
        'each step once, and nothing after the last',
      );
      const events = ((await s.get(`/v1/incidents/${key}/history`)).body.events as Array<Record<string, unknown>>).filter((e) => e.type === 'escalated');
      assert.deepEqual(
        events.map((e) => [e.step, e.adapters]),
        [
          [1, ['pager']],
          [2, ['duty']],
        ],
        'the history shows each step',
      );
      assert.equal((await s.del(`/v1/incidents/${key}`)).status, 204);
      // The steps' adapters joined the key's route: the close reaches every page the key opened.
      await until(
        () => ['/noc', '/pager', '/duty'].every((p) => at(p, key).some((b) => b.action === 'close')) || null,
        10_000,
        () => 'the close did not reach every page',
      );
    });

    if (backend !== 'memory' && backend !== 'sqlite')
      test('two replicas, one restarted between the steps: each step once', async () => {
        const url = await stores.fresh();
        const a = await inProcessServer({ store: url, config: config(hook) });
        let b = await inProcessServer({ store: url, config: config(hook) });
        server = a;
        try {
          const key = await create(a, 'olt-5');
          const both = async (ms: number) => {
            for (const r of [a, b]) r.clock.advance(ms);
            if (storeKeepsItsOwnTime(backend)) await sleep(ms);
          };
          await waited(a, key, 1);
          await both(2500);
          await until(
            () => at('/pager', key).length >= 1 || null,
            WAIT_MS,
            () => 'step 1 never paged',
          );
          // Replica b goes away and a new one takes its place, on a clock that went on meanwhile.
          await b.stop();
          b = await inProcessServer({ store: url, config: config(hook), clockStart: a.clock.now() });
          await waited(a, key, 2);
          await both(2500);
          await until(
            () => at('/duty', key).length >= 1 || null,
            WAIT_MS,
            () => 'step 2 never paged',
          );
          await both(5000);
          await caughtUp([a, b]);
          assert.deepEqual(
            ['/pager', '/duty'].map((p) => at(p, key).map((x) => x.data.escalation)),
            [[1], [2]],
            'each step once across both replicas',
          );
        } finally {
          await b.stop();
        }
      });

    test('an acknowledgement after the first step stops the rest; one before it stops them all; a close too', async () => {
      const s = await start();
      const [late, early, closed] = [await create(s, 'olt-2'), await create(s, 'olt-3'), await create(s, 'olt-4')];
      assert.equal((await s.post(`/v1/incidents/${encodeURIComponent(early)}/ack`, {})).status, 200);
      assert.equal((await s.del(`/v1/incidents/${closed}`)).status, 204);
      await waited(s, late, 1);
      await pass(s, 2500);
      await until(
        () => at('/pager', late).length === 1 || null,
        WAIT_MS,
        () => 'step 1 never paged the key nobody acknowledged',
      );
      assert.equal((await s.post(`/v1/incidents/${encodeURIComponent(late)}/ack`, {})).status, 200);
      await pass(s, 2500);
      await caughtUp(s);
      await pass(s, 2500);
      await caughtUp(s);
      assert.deepEqual(at('/duty', late), [], 'no step after the acknowledgement');
      assert.deepEqual([at('/pager', early), at('/duty', early)], [[], []], 'acknowledged before the first step: none');
      assert.deepEqual([at('/pager', closed), at('/duty', closed)], [[], []], 'closed before the first step: none');
    });
  });

describe('escalation config', () => {
  test('a step naming no adapter, a bad or missing time, too many steps, or no adapters is refused, naming where', async () => {
    const { parseConfig } = await import('../../src/config/load.js');
    const base = `adapters: [ { name: noc, type: webhook, url: "http://127.0.0.1:9/x" } ]\n`;
    const step = '{ after: 1m, to: [noc] }';
    const cases: Array<[string, RegExp]> = [
      [`route: { receiver: noc, escalate: [ { after: 5m, to: [pager] } ] }`, /route\.escalate\.0\.to\.0: no adapter named "pager" is configured/],
      [`route: { receiver: noc, escalate: [ { after: 0s, to: [noc] } ] }`, /route\.escalate\.0\.after: a duration must be more than zero/],
      [`route: { receiver: noc, escalate: [ { to: [noc] } ] }`, /route\.escalate\.0\.after/],
      [`route: { receiver: noc, escalate: [ { after: 5m, to: [] } ] }`, /route\.escalate\.0\.to/],
      [`route: { receiver: noc, escalate: [ ${Array(11).fill(step).join(', ')} ] }`, /route\.escalate/],
      [`route: { receiver: noc, escalate: [ { after: 5m, to: [noc], then: x } ] }`, /unknown field|unrecognized/i],
    ];
    for (const [route, message] of cases) assert.throws(() => parseConfig(base + route, 'test.yaml'), message, route);
    assert.doesNotThrow(() => parseConfig(`${base}route: { receiver: noc, escalate: [ ${step}, ${step} ] }`, 'test.yaml'));
  });
});
