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
