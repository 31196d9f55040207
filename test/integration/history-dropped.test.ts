// needs: redis
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startRedis } from '../helpers/redis.js';
import { inProcessServer } from '../helpers/server.js';
import { until } from '../helpers/wait.js';

const metric = async (url: string, re: RegExp) => {
  const m = re.exec(await (await fetch(`${url}/metrics`)).text());
  return m ? Number(m[1]) : 0;
};

test('history events a store refuses while a replica fails open are counted by reason, and the decisions still answer', async () => {
  const redis = await startRedis();
  process.env.ONCEONLY_REDIS_ACCEPT_DATA_LOSS = '1';
  const s = await inProcessServer({ store: redis.url, config: 'history: { max_events: 50 }\n' });
  try {
    const dropped = () => metric(s.url, /^onceonly_history_dropped_total\{reason="store_refused"\} (\d+)$/m);
    const post = (n: number) => s.post('/v1/incidents', { element_id: `el-${n}`, fault_class: 'LOS', root_cause_id: 'rc', severity: 'MAJOR', cleared: false });
    assert.equal((await post(0)).status, 200);
    assert.equal(await dropped(), 0, 'a healthy store drops nothing');
    await redis.kill('SIGSTOP');
    try {
      for (let n = 1; n <= 3; n++) {
        const r = await post(n);
        assert.equal(r.status, 200, 'failed open: still answered');
        assert.equal(r.body.decision, 'CREATE');
      }
      // The recorder writes after the decision: its batch is refused by the store that is away, and counted.
      let seen = 0;
      await until(
        async () => ((seen = await dropped()) >= 3 ? true : null),
        20_000,
        () => `dropped ${seen}`,
      );
      assert.ok((await metric(s.url, /^onceonly_history_lost_total (\d+)$/m)) >= 3, "0.2.0's counter counts them too");
    } finally {
      await redis.kill('SIGCONT');
    }
  } finally {
    await s.stop();
    await redis.stop();
    delete process.env.ONCEONLY_REDIS_ACCEPT_DATA_LOSS;
  }
});

test("a tenant's histories past history.max_bytes_per_tenant keep no more events (counted), and another tenant's history is untouched", async () => {
  const tokens = { acme: 'acme-token-0123456789abcdef', globex: 'globex-token-0123456789abcdef' };
  // The SQLite file npm start serves on: 1 MiB a tenant, and events of about 8 KiB (labels at their cap).
  const s = await inProcessServer({
    config: `history: { max_bytes_per_tenant: 1048576 }\ntenants:\n  - { id: acme, tokens: [${tokens.acme}] }\n  - { id: globex, tokens: [${tokens.globex}] }\n`,
  });
  try {
    const post = async (tenant: keyof typeof tokens, n: number) => {
      const labels = Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`l${i}`, `${n}`.padEnd(1000, 'x')]));
      const r = await s.app.inject({
        method: 'POST',
        url: '/v1/incidents',
        headers: { authorization: `Bearer ${tokens[tenant]}`, 'content-type': 'application/json' },
        payload: JSON.stringify({ element_id: `el-${n}`, fault_class: 'LOS', root_cause_id: 'rc', severity: 'MAJOR', labels }),
      });
      assert.equal(r.statusCode, 200, r.payload);
      return r.json().dedup_key as string;
    };
    const history = async (tenant: keyof typeof tokens, key: string) =>
      s.app.inject({ method: 'GET', url: `/v1/incidents/${key}/history`, headers: { authorization: `Bearer ${tokens[tenant]}` } });
    const dropped = () => metric(s.url, /^onceonly_history_dropped_total\{reason="tenant_bytes"\} (\d+)$/m);
    // 200 new keys of about 8 KiB each: about 1.6 MiB asked, 1 MiB kept.
    const keys: string[] = [];
    for (let n = 0; n < 200; n++) keys.push(await post('acme', n));
    let seen = 0;
    await until(
      async () => ((seen = await dropped()) >= 50 ? true : null),
      20_000,
      () => `dropped ${seen}`,
    );
    // Every decision still answered (above); the first keys keep their history, the last have none.
    assert.equal((await history('acme', keys[0]!)).statusCode, 200);
    assert.equal((await history('acme', keys[199]!)).statusCode, 404, 'the last key: its event found no room');
    const globex = await post('globex', 1000);
    await until(
      async () => ((await history('globex', globex)).statusCode === 200 ? true : null),
      10_000,
      () => "globex's history is kept",
    );
  } finally {
    await s.stop();
  }
});
