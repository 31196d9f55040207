import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { inProcessServer, type InProcessServer } from '../helpers/server.js';
import { startSink, type FakeServer } from '../fakes/http-fake.js';
import { metric } from '../helpers/load.js';
import { caughtUp } from '../helpers/settle.js';
import { until } from '../helpers/wait.js';

describe('HTTP: dead letters', () => {
  let s: InProcessServer;
  let hook: FakeServer;
  before(async () => {
    hook = await startSink(200, {});
    hook.faults = () => ({ status: 500, body: { error: 'receiver down' } });
    s = await inProcessServer({
      config: `delivery: { max_retries: 0 }\nadapters: [ { name: hook, type: webhook, url: "${hook.url}/in" } ]\n`,
    });
  });
  after(async () => {
    await s.stop();
    await hook.close();
  });

  test('a failed delivery is listed with its payload, adapter and every attempt, retried on request, delivered once', async () => {
    const v = { process_id: 'cmp-2', rule_id: 'nelson_1', timestamp: 1770000000, value: 13, center: 10, ucl: 12, lcl: 8 };
    const { body: decision } = await s.post('/v1/violations', v);
    const list = await until(async () => {
      const r = await s.get('/v1/dead-letters');
      return r.body.dead_letters.length > 0 ? r.body.dead_letters : null;
    }, 10_000);
    assert.equal(list.length, 1);
    const d = list[0];
    assert.equal(d.adapter, 'hook');
    assert.deepEqual([d.tenant, d.kind, d.action, d.key, d.idempotency_key], ['default', 'violation', 'create', decision.key, `${decision.key}:create:1`]);
    assert.deepEqual(d.payload, {
      action: 'create',
      kind: 'violation',
      key: decision.key,
      tenant: 'default',
      severity: 'CRITICAL',
      summary: 'SPC-BEYOND-3S on cmp-2 (nelson_1)',
      data: { ...v, alarm_code: 'SPC-BEYOND-3S', notify: true },
    });
    assert.equal(d.attempts.length, 1);
    assert.match(d.attempts[0].error, /retries exhausted \(0\): POST http:\/\/127\.0\.0\.1:\d+: HTTP 500/);
    assert.equal(d.attempts[0].at, new Date(s.clock.now()).toISOString());
    assert.equal(d.dead_at, new Date(s.clock.now()).toISOString());
    assert.equal(await metric(s.url, /^onceonly_dead_letters (\d+)/m), 1);
    assert.equal(await metric(s.url, /^onceonly_deliveries_total\{adapter="hook",outcome="dead",reason="exhausted"\} (\d+)/m), 1);
    assert.equal(await metric(s.url, /^onceonly_delivery_attempts_total\{adapter="hook"\} (\d+)/m), 1);

    hook.faults = () => 'ok';
    const before = hook.requests.length;
    const retry = await s.post(`/v1/dead-letters/${encodeURIComponent(d.id)}/retry`, undefined);
    assert.deepEqual([retry.status, retry.body], [202, { id: d.id, status: 'queued' }]);
    await until(async () => (await s.get('/v1/dead-letters')).body.dead_letters.length === 0 && hook.requests.length > before, 10_000);
    await caughtUp(s);
    assert.equal(hook.requests.length - before, 1, 'delivered once');
    assert.equal(hook.requests.at(-1)!.headers['idempotency-key'], `${decision.key}:create:1`);
    assert.equal(await metric(s.url, /^onceonly_dead_letters (\d+)/m), 0);
    assert.equal(await metric(s.url, /^onceonly_outbox_lag_seconds (\d+)/m), 0);
    assert.equal(await metric(s.url, /^onceonly_deliveries_total\{adapter="hook",outcome="delivered",reason="ok"\} (\d+)/m), 1);
    const again = await s.post(`/v1/dead-letters/${encodeURIComponent(d.id)}/retry`, undefined);
    assert.equal(again.status, 404, 'no longer a dead letter');
  });

  // The order a receiver sees: a create it refused (a 400) and the close decided after it. The close
  // must not go first: retried, the create would then open a ticket for a closed incident.
  test('a dead create holds its key: the close waits behind it, shown as waiting; retried, both go in order; dropped, the close goes', async () => {
    const refused = new Set<string>();
    hook.faults = (q) => (refused.has(q.body?.key) && q.body?.action === 'create' ? { status: 400, body: { error: 'bad field' } } : 'ok');
    const deadOf = async (key: string) => (await s.get('/v1/dead-letters')).body.dead_letters.find((d: { key: string }) => d.key === key);
    const incident = (element_id: string) => ({ element_id, fault_class: 'LOS', root_cause_id: 'cut-9', severity: 'MAJOR' });
    for (const [element, settleBy] of [
      ['olt-31', 'retry'],
      ['olt-32', 'drop'],
    ] as const) {
      const { body } = await s.post('/v1/incidents', incident(element));
      const key = body.dedup_key as string;
      refused.add(key);
      await until(
        () => deadOf(key),
        10_000,
        () => `${key}'s create never went dead`,
      );
      assert.equal((await s.del(`/v1/incidents/${key}`)).status, 204);
      s.clock.advance(5_000);
      await caughtUp(s);
      assert.deepEqual(
        hook.requests.filter((q) => q.body?.key === key && q.body.action === 'close'),
        [],
        'the close did not overtake the create the receiver refused',
      );
      const dead = await deadOf(key);
      assert.equal(dead.waiting, 1, 'the dead letter shows the close waiting behind it');
      refused.delete(key);
      if (settleBy === 'retry') {
        assert.equal((await s.post(`/v1/dead-letters/${encodeURIComponent(dead.id)}/retry`, undefined)).status, 202);
        await until(() => hook.requests.filter((q) => q.body?.key === key && q.body.action === 'close').length === 1 || null, 10_000);
        // The receiver saw: the refused create, the create again (taken), then the close.
        assert.deepEqual(
          hook.requests.filter((q) => q.body?.key === key).map((q) => q.body.action),
          ['create', 'create', 'close'],
        );
      } else {
        const dropped = await s.del(`/v1/dead-letters/${encodeURIComponent(dead.id)}`);
        assert.equal(dropped.status, 204);
        assert.equal((await s.del(`/v1/dead-letters/${encodeURIComponent(dead.id)}`)).status, 404, 'dropped once');
        await until(() => hook.requests.filter((q) => q.body?.key === key && q.body.action === 'close').length === 1 || null, 10_000);
        assert.deepEqual(
          hook.requests.filter((q) => q.body?.key === key).map((q) => q.body.action),
          ['create', 'close'],
          'the dropped create never went again; the close followed',
        );
        assert.equal(await deadOf(key), undefined);
      }
    }
    hook.faults = () => 'ok';
  });

  test('bad requests get a clear error and change nothing', async () => {
    for (const q of ['limit=0', 'limit=1001', 'limit=abc', 'limit=1.5', 'colour=red']) {
      const r = await s.get(`/v1/dead-letters?${q}`);
      assert.equal(r.status, 400, q);
      assert.equal(r.body.error.code, 'invalid_input');
      assert.ok(r.body.error.issues[0].path === 'limit' || r.body.error.issues[0].path === 'colour', q);
    }
    const missing = await s.post('/v1/dead-letters/0.nope/retry', undefined);
    assert.deepEqual([missing.status, missing.body.error.code], [404, 'not_found']);
    assert.match(missing.body.error.message, /no dead letter "0\.nope"/);
    const gone = await s.del('/v1/dead-letters/0.nope');
    assert.deepEqual([gone.status, gone.body.error.code], [404, 'not_found']);
    assert.deepEqual((await s.get('/v1/dead-letters?limit=5')).body, { dead_letters: [] });
  });
});
