// needs: redis
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startSink } from '../fakes/http-fake.js';
import { post } from '../helpers/load.js';
import type { ServerProcess } from '../helpers/process.js';
import { defaultReplicas } from '../helpers/default-replicas.js';
import { startRedis } from '../helpers/redis.js';
import { caughtUp } from '../helpers/settle.js';
import { tempDir } from '../helpers/tmp.js';
import { until } from '../helpers/wait.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A store that flaps: Redis paused and resumed every 300 ms for 6 s, while
 * one fault is re-sent to two replicas (default fail-open settings) without
 * pause. Each replica may answer it CREATE provisionally once in the whole
 * outage, never once per pause, and its provisional create reaches the
 * receiver under one Idempotency-Key.
 */
test('a store paused and resumed every 300 ms: at most one provisional CREATE per replica, one Idempotency-Key each', async () => {
  const redis = await startRedis();
  const hook = await startSink(200, {});
  const dir = tempDir();
  const replicas: ServerProcess[] = [];
  let flapping = true;
  try {
    await defaultReplicas(redis.url, hook.url, dir.path, replicas);
    const fault = { element_id: 'olt-flap', fault_class: 'LOS', root_cause_id: 'cut', severity: 'MAJOR' };
    const first = await post(`${replicas[0]!.url}/v1/incidents`, fault);
    assert.deepEqual([first.body.decision, first.body.provisional], ['CREATE', false], 'decided on the healthy store first');

    const flapper = (async () => {
      let paused = false;
      const until = Date.now() + 6000;
      while (Date.now() < until) {
        await redis.kill(paused ? 'SIGCONT' : 'SIGSTOP');
        paused = !paused;
        await sleep(300);
      }
      await redis.kill('SIGCONT');
      flapping = false;
    })();
    const answers = replicas.map(() => [] as Array<{ decision: string; provisional: boolean; status: number }>);
    await Promise.all(
      replicas.map(async (r, i) => {
        while (flapping) {
          const a = await post(`${r.url}/v1/incidents`, fault);
          answers[i]!.push({ decision: a.body?.decision, provisional: a.body?.provisional, status: a.status });
          await sleep(20);
        }
      }),
    );
    await flapper;

    for (const [i, list] of answers.entries()) {
      assert.ok(list.length > 20, `replica ${i + 1} was asked throughout (${list.length} answers)`);
      assert.ok(
        list.every((a) => a.status === 200),
        `every arrival answered: ${JSON.stringify(list.find((a) => a.status !== 200))}`,
      );
      const provisionalCreates = list.filter((a) => a.decision === 'CREATE' && a.provisional).length;
      assert.ok(provisionalCreates <= 1, `replica ${i + 1} answered ${provisionalCreates} provisional CREATEs for one fault`);
      assert.equal(list.filter((a) => a.decision === 'CREATE' && !a.provisional).length, 0, 'never a second CREATE on the store');
    }
    // Both replicas back on the store, their journals replayed.
    await until(
      async () => {
        const s = await Promise.all(
          replicas.map((r) =>
            fetch(`${r.url}/readyz`).then(
              (x) => x.status,
              () => 0,
            ),
          ),
        );
        return s.every((x) => x === 200) || null;
      },
      30_000,
      () => 'both replicas ready again',
    );
    await caughtUp(replicas);
    const creates = hook.requests.filter((r) => r.body.action === 'create');
    const keys = new Set(creates.map((r) => r.headers['idempotency-key']));
    const provisional = answers.flat().filter((a) => a.decision === 'CREATE' && a.provisional).length;
    assert.ok(creates.length >= 1, 'the fault was delivered');
    assert.ok(keys.size <= 1 + provisional, `creates under ${keys.size} Idempotency-Keys for 1 + ${provisional} CREATEs: ${[...keys].join(', ')}`);
    assert.ok(keys.size <= 3);
  } finally {
    flapping = false;
    await redis.kill('SIGCONT').catch(() => {});
    await Promise.all(replicas.map((r) => r.stop('SIGKILL')));
    await hook.close();
    await redis.stop();
    dir.remove();
  }
});
