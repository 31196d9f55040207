import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { servicenowCorrelation } from '../helpers/identities.js';
import { startServicenowFake, type SnowRecord } from '../fakes/servicenow-fake.js';
import { inProcessServer, type InProcessServer } from '../helpers/server.js';
import { quietAfter } from '../helpers/settle.js';

const A = 'token-of-tenant-acme-0001';
const B = 'token-of-tenant-beta-0002';
/** A tenant whose id differs from acme's only by case: ServiceNow's `=` cannot tell them apart. */
const C = 'token-of-tenant-Acme-0003';

let snow: Awaited<ReturnType<typeof startServicenowFake>>;
let s: InProcessServer;
before(async () => {
  snow = await startServicenowFake();
  s = await inProcessServer({
    config: `tenants:\n  - { id: acme, tokens: [${A}] }\n  - { id: beta, tokens: [${B}] }\n  - { id: Acme, tokens: [${C}] }\nadapters: [ { name: snow, type: servicenow, instance_url: "${snow.url}", username: onceonly, password: secret } ]\n`,
  });
});
after(async () => {
  await s.stop();
  await snow.close();
});

const enqueue = (token: string, body: object) =>
  s.app.inject({ method: 'POST', url: '/v2/enqueue', headers: { authorization: `Bearer ${token}` }, payload: body });
const settled = (since: number) => quietAfter(s, () => snow.requests.length, since);

/** A PagerDuty trigger through the drop-in, as `token`'s tenant, waited for until ServiceNow is quiet again. */
async function triggerAndSettle(token: string, dedup_key: string, summary: string) {
  const since = snow.requests.length;
  const r = await enqueue(token, { routing_key: 'r', event_action: 'trigger', dedup_key, payload: { summary, source: 'h', severity: 'critical' } });
  assert.equal(r.statusCode, 202);
  await settled(since);
}

test('a key holding encoded-query operators cannot reach another tenant’s ServiceNow record', async () => {
  assert.equal(
    (
      await s.app.inject({
        method: 'POST',
        url: '/v1/incidents',
        headers: { authorization: `Bearer ${A}` },
        payload: { element_id: 'olt-1', fault_class: 'LOS', root_cause_id: 'cut', severity: 'MAJOR' },
      })
    ).statusCode,
    200,
  );
  await settled(0);
  assert.equal(snow.records.size, 1);
  const acme = { ...[...snow.records.values()][0]! } as SnowRecord;

  // Each would match acme's record if it reached the query as written: a new query, an OR, an order.
  for (const dedup_key of ['k^NQcorrelation_idISNOTEMPTY', 'k^ORcorrelation_id!=nothing', 'k^ORDERBYnumber^NQcorrelation_idISNOTEMPTY']) {
    let since = snow.requests.length;
    const trigger = await enqueue(B, { routing_key: 'r', event_action: 'trigger', dedup_key, payload: { summary: 'beta', source: 'h', severity: 'error' } });
    assert.equal(trigger.statusCode, 202, trigger.body);
    await settled(since);
    since = snow.requests.length;
    const resolve = await enqueue(B, { routing_key: 'r', event_action: 'resolve', dedup_key });
    assert.equal(resolve.statusCode, 202);
    await settled(since);
  }
  const after = snow.records.get(acme.sys_id)!;
  assert.deepEqual(
    { state: after.state, notes: after.work_notes_count, short: after.short_description },
    { state: acme.state, notes: acme.work_notes_count, short: acme.short_description },
    'acme’s record is untouched',
  );
  const beta = [...snow.records.values()].filter((r) => r.sys_id !== acme.sys_id);
  assert.equal(beta.length, 3, 'beta got its own record for each key');
  for (const r of beta) assert.match(String(r.correlation_id), /^onceonly-[0-9a-f]{40}$/);
  assert.ok(
    beta.every((r) => r.state === '6'),
    'and resolved each of its own',
  );
});

test('a record an earlier version made (correlation_id = the key) is found and moved to the hashed id, not duplicated', async () => {
  const key = 'pd:legacy-key-1';
  snow.records.set('1e9ac7', { sys_id: '1e9ac7', number: 'INC0009999', correlation_id: `acme:${key}`, state: '1' });
  await triggerAndSettle(A, 'legacy-key-1', 'again');
  const rec = snow.records.get('1e9ac7')!;
  assert.equal(rec.correlation_id, servicenowCorrelation({ tenant: 'acme', kind: 'incident', key }));
  assert.equal([...snow.records.values()].filter((x) => x.short_description === 'again').length, 1, 'updated in place, no second record');
});

test('tenants whose ids differ only by case keep apart at ServiceNow, whose = ignores case: Acme never takes over acme’s old record', async () => {
  const key = 'pd:legacy-key-2';
  snow.records.set('2f0bd8', { sys_id: '2f0bd8', number: 'INC0009998', correlation_id: `acme:${key}`, state: '1', short_description: 'acme’s own' });
  await triggerAndSettle(C, 'legacy-key-2', 'Acme’s');
  const theirs = snow.records.get('2f0bd8')!;
  assert.deepEqual([theirs.correlation_id, theirs.short_description], [`acme:${key}`, 'acme’s own'], 'acme’s record untouched');
  const mine = [...snow.records.values()].filter((x) => x.short_description === 'Acme’s');
  assert.equal(mine.length, 1, 'Acme got a record of its own');
  assert.notEqual(mine[0]!.sys_id, '2f0bd8');
});

test('a legacy id two tenants could have written is not looked up: `default` and a tenant named like a key prefix keep apart', async () => {
  const D = 'token-of-tenant-default-04';
  const P = 'token-of-tenant-pd-000005';
  const t = await inProcessServer({
    config: `tenants:\n  - { id: default, tokens: [${D}] }\n  - { id: pd, tokens: [${P}] }\nadapters: [ { name: snow, type: servicenow, instance_url: "${snow.url}", username: onceonly, password: secret } ]\n`,
  });
  try {
    const trigger = async (token: string, dedup_key: string, summary: string) => {
      const since = snow.requests.length;
      const r = await t.app.inject({
        method: 'POST',
        url: '/v2/enqueue',
        headers: { authorization: `Bearer ${token}` },
        payload: { routing_key: 'r', event_action: 'trigger', dedup_key, payload: { summary, source: 'h', severity: 'critical' } },
      });
      assert.equal(r.statusCode, 202, r.body);
      await quietAfter(t, () => snow.requests.length, since);
    };
    // Tenant pd's old record for its key `pd:x1` was written as `pd:pd:x1`; default's PagerDuty key `pd:pd:x1` reads the same.
    snow.records.set('3a1ce9', { sys_id: '3a1ce9', number: 'INC0009997', correlation_id: 'pd:pd:x1', state: '1', short_description: 'pd’s own' });
    await trigger(D, 'pd:x1', 'default’s');
    // Default's old record for its PagerDuty key `pd:pd:x2`; tenant pd's key `pd:x2` reads the same.
    snow.records.set('4b2df0', { sys_id: '4b2df0', number: 'INC0009996', correlation_id: 'pd:pd:x2', state: '1', short_description: 'default’s own' });
    await trigger(P, 'x2', 'pd’s');
    assert.deepEqual(
      [snow.records.get('3a1ce9')!.short_description, snow.records.get('4b2df0')!.short_description],
      ['pd’s own', 'default’s own'],
      'neither old record was taken over',
    );
    for (const summary of ['default’s', 'pd’s']) {
      const mine = [...snow.records.values()].filter((x) => x.short_description === summary);
      assert.equal(mine.length, 1, `${summary} got a record of its own`);
      assert.match(String(mine[0]!.correlation_id), /^onceonly-[0-9a-f]{40}$/);
    }
  } finally {
    await t.stop();
  }
});
