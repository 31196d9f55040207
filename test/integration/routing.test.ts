// needs: redis postgres
import { afterEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { FakeServer } from '../fakes/http-fake.js';
import { BACKENDS, backendWithSink } from '../helpers/backends.js';
import { inProcessServer, type InProcessServer } from '../helpers/server.js';
import { caughtUp } from '../helpers/settle.js';
import { until } from '../helpers/wait.js';

const ADAPTERS = (hook: FakeServer) => `
adapters:
  - { name: noc, type: webhook, url: "${hook.url}/noc" }
  - { name: pager, type: webhook, url: "${hook.url}/pager" }
  - { name: eu, type: webhook, url: "${hook.url}/eu" }
`;
/** onceonly's CRITICAL (an incident's CRITICAL, PagerDuty's critical) pages and goes on; region eu goes to eu; the root takes what no route took. */
const TREE_A = `
route:
  receiver: noc
  routes:
    - { receiver: pager, matchers: ['oo_severity="CRITICAL"'], continue: true }
    - { receiver: eu, matchers: ['region="eu"'] }
`;
/** After the reload: region eu pages, everything else goes to noc. */
const TREE_B = `
route:
  receiver: noc
  routes:
    - { receiver: pager, matchers: ['region="eu"'] }
`;
const incident = (element_id: string, severity: string, labels: Record<string, string> = {}) => ({
  element_id,
  fault_class: 'LOS',
  root_cause_id: `rc-${element_id}`,
  severity,
  labels,
});
const pd = (event_action: string, severity = 'critical') => ({
  routing_key: 'r',
  event_action,
  dedup_key: 'core-7',
  payload: { summary: 'core router down', source: 'core-7', severity },
});

for (const backend of BACKENDS)
  describe(`routing on ${backend}`, () => {
    const shared = backend !== 'memory' && backend !== 'sqlite';
    let hook: FakeServer;
    let replicas: InProcessServer[] = [];
    const stores = backendWithSink(backend, (h) => (hook = h));
    afterEach(async () => {
      await Promise.all(replicas.map((r) => r.stop()));
      replicas = [];
      hook.requests.length = 0;
    });
    const start = async (config: string) => {
      const url = await stores.fresh();
      replicas = shared ? await Promise.all([0, 1].map(() => inProcessServer({ store: url, config }))) : [await inProcessServer({ store: url, config })];
    };
    /** The second replica where the store is shared (another process's view of it), else the only one. */
    const other = () => replicas[replicas.length - 1]!;
    /** Waits for `n` calls, then for every worker to be idle, and answers what each adapter got: "key action", by adapter. */
    const delivered = async (n: number, name: (key: string) => string) => {
      await until(
        () => hook.requests.length >= n || null,
        15_000,
        () => `${hook.requests.length} of ${n} deliveries: ${hook.requests.map((r) => `${r.path} ${r.body.action}`).join(', ')}`,
      );
      await caughtUp(replicas);
      const by: Record<string, string[]> = {};
      for (const r of hook.requests) (by[r.path.slice(1)] ??= []).push(`${name(r.body.key)} ${r.body.action}`);
      for (const list of Object.values(by)) list.sort();
      return by;
    };

    test('each create reaches exactly the adapters its labels route it to', async () => {
      await start(ADAPTERS(hook) + TREE_A);
      const keys = new Map<string, string>();
      const send = [
        ['eu-major', incident('a', 'MAJOR', { region: 'eu' })],
        ['us-critical', incident('b', 'CRITICAL', { region: 'us' })],
        ['plain-minor', incident('c', 'MINOR')],
        ['eu-critical', incident('d', 'CRITICAL', { region: 'eu' })],
      ] as const;
      for (const [i, [name, body]] of send.entries()) {
        const r = await replicas[i % replicas.length]!.post('/v1/incidents', body);
        assert.equal(r.status, 200);
        keys.set(r.body.dedup_key, name);
      }
      assert.deepEqual(await delivered(5, (k) => keys.get(k)!), {
        eu: ['eu-critical create', 'eu-major create'],
        pager: ['eu-critical create', 'us-critical create'],
        noc: ['plain-minor create'],
      });
    });

    test(`a key's update, acknowledgement and close follow its create${shared ? ' across two replicas' : ''} and a reload; new keys take the new tree`, async () => {
      await start(ADAPTERS(hook) + TREE_A);
      const created = await replicas[0]!.post('/v1/incidents', incident('x', 'MAJOR', { region: 'eu' }));
      assert.equal(created.body.decision, 'CREATE');
      const x = created.body.dedup_key as string;
      assert.equal((await replicas[0]!.post('/v2/enqueue', pd('trigger'))).status, 202);
      const names = (k: string) => (k === x ? 'x' : k === 'pd:core-7' ? 'pd' : k);
      assert.deepEqual(await delivered(2, names), { eu: ['x create'], pager: ['pd create'] });

      for (const r of replicas) {
        r.writeConfig(ADAPTERS(hook) + TREE_B);
        r.config.reload();
      }
      // Under the new tree x's labels would page and pd's would go to noc: neither may move.
      const changed = await other().post('/v1/incidents', incident('x', 'CRITICAL', { region: 'eu' }));
      assert.equal(changed.body.decision, 'UPDATE');
      assert.equal((await other().post('/v2/enqueue', pd('acknowledge'))).status, 202);
      assert.equal((await replicas[0]!.del(`/v1/incidents/${x}`)).status, 204);
      assert.equal((await replicas[0]!.post('/v2/enqueue', pd('resolve'))).status, 202);
      const fresh = await other().post('/v1/incidents', incident('y', 'MINOR', { region: 'eu' }));
      const again = await replicas[0]!.post('/v1/incidents', incident('x', 'MINOR', { region: 'us' }));
      assert.equal(again.body.decision, 'CREATE', 'the closed key is new again');
      const y = fresh.body.dedup_key as string;
      assert.deepEqual(
        await delivered(8, (k) => (k === y ? 'y' : names(k))),
        {
          eu: ['x close', 'x create', 'x update'],
          pager: ['pd close', 'pd create', 'pd update', 'y create'],
          noc: ['x create'],
        },
        'x and pd kept their routes; y and the recreated x went by the new tree',
      );
    });
  });
