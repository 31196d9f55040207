// needs: redis postgres
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startSink, type FakeServer } from '../fakes/http-fake.js';
import { BACKENDS, backendStores } from '../helpers/backends.js';
import { inProcessServer, type InProcessServer } from '../helpers/server.js';
import { until } from '../helpers/wait.js';

const A = 'silence-tenant-acme-token-01';
const B = 'silence-tenant-beta-token-02';
const H = 3_600_000;

// A tenant's silence mutes that tenant's keys and no other's, through the API,
// on every store: the silence lives in the shared store and every replica's
// copy, so the tenant it belongs to must be kept at each step.
// Planted fault it catches: SilenceCache.mutedBy reading every tenant's silences (acme's CREATE answered muted by beta's silence).
for (const backend of BACKENDS)
  describe(`silences are per tenant on ${backend}`, () => {
    const stores = backendStores(backend);
    let s: InProcessServer;
    let hook: FakeServer;
    before(async () => {
      await stores.start();
      hook = await startSink(200, {});
      s = await inProcessServer({
        store: await stores.fresh(),
        config:
          `tenants:\n  - { id: acme, tokens: [${A}] }\n  - { id: beta, tokens: [${B}] }\n` +
          `adapters: [ { name: hook, type: webhook, url: "${hook.url}/in" } ]\n`,
      });
    });
    after(async () => {
      await s?.stop();
      await hook?.close();
      await stores.stop();
    });
    const call = async (token: string, method: 'GET' | 'POST', url: string, body?: unknown) => {
      const r = await s.app.inject({ method, url, headers: { authorization: `Bearer ${token}` }, ...(body === undefined ? {} : { payload: body as object }) });
      return { status: r.statusCode, body: r.payload ? JSON.parse(r.payload) : null };
    };
    const incident = (element_id: string) => ({ element_id, fault_class: 'LOS', root_cause_id: 'cut-9', severity: 'MAJOR' });

    test("beta's silence mutes beta's alert and never acme's, in the answer and at the adapter", async () => {
      const made = await call(B, 'POST', '/api/v2/silences', {
        matchers: [{ name: 'fault_class', value: 'LOS', isRegex: false, isEqual: true }],
        startsAt: new Date(s.clock.now()).toISOString(),
        endsAt: new Date(s.clock.now() + 2 * H).toISOString(),
        createdBy: 'beta-noc',
        comment: 'beta fiber work',
      });
      assert.equal(made.status, 200);
      const id = made.body.silenceID as string;
      const betas = await call(B, 'POST', '/v1/incidents', incident('olt-shared-1'));
      assert.deepEqual([betas.body.decision, betas.body.muted], ['CREATE', { by: 'silence', id }], "the silence mutes its own tenant's alert");
      // The same alert, so the same key: only the tenant tells them apart.
      const acmes = await call(A, 'POST', '/v1/incidents', incident('olt-shared-1'));
      assert.equal(acmes.body.dedup_key, betas.body.dedup_key);
      assert.deepEqual([acmes.body.decision, acmes.body.muted], ['CREATE', null], "acme's same alert is not muted by beta's silence");
      const am = await call(A, 'POST', '/v1/alertmanager', {
        version: '4',
        status: 'firing',
        receiver: 'onceonly',
        groupKey: '{}:{alertname="FiberCut"}',
        alerts: [
          {
            status: 'firing',
            labels: { alertname: 'FiberCut', fault_class: 'LOS' },
            annotations: {},
            startsAt: new Date(s.clock.now()).toISOString(),
            fingerprint: 'abcdef0123456789',
          },
        ],
      });
      assert.deepEqual([am.status, am.body.alerts?.[0]?.outcome], [200, 'CREATE']);
      assert.deepEqual((await call(A, 'GET', '/api/v2/silences')).body, [], "acme does not see beta's silence");
      // At the adapter: acme's create goes out; beta's waits for its silence.
      await until(
        () => hook.requests.some((r) => r.body?.tenant === 'acme' && r.body?.key === acmes.body.dedup_key),
        10_000,
        () => "acme's create delivered",
      );
      await until(
        () => hook.requests.some((r) => r.body?.tenant === 'acme' && String(r.body?.key).startsWith('am:')),
        10_000,
        () => "acme's Alertmanager create delivered",
      );
      assert.equal(
        hook.requests.some((r) => r.body?.tenant === 'beta'),
        false,
        "beta's muted create is held",
      );
    });
  });
