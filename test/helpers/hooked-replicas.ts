import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startSink, type FakeServer } from '../fakes/http-fake.js';
import { spawnServer, type ServerProcess } from './process.js';
import { startRedis, type RedisServer } from './redis.js';
import { tempDir } from './tmp.js';

export interface HookedReplicas {
  redis: RedisServer;
  /** the webhook receiver both replicas deliver to */
  hook: FakeServer;
  /** the two replicas now running (a restart replaces them) */
  replicas: [ServerProcess, ServerProcess];
  /** SIGKILLs both and starts them again on the same store and configs */
  restart(): Promise<[ServerProcess, ServerProcess]>;
  /** `action:severity` of each delivery whose data names this element */
  deliveredFor(element_id: string): string[];
  stop(): Promise<void>;
}

/**
 * Two `onceonly serve` processes on one Redis of their own, each with its own
 * fail-open journal, delivering to one webhook receiver; `extraYaml` is added
 * to both configs. A 1 s fail-open timeout, so a loaded machine does not turn
 * a slow answer into a 503.
 */
export async function hookedReplicas(extraYaml = ''): Promise<HookedReplicas> {
  const redis = await startRedis();
  const hook = await startSink(200, {});
  const dir = tempDir();
  const config = (n: number) => {
    const p = join(dir.path, `r${n}.yaml`);
    writeFileSync(
      p,
      `failopen:\n  timeout_ms: 1000\n  journal_path: ${join(dir.path, `journal-${n}.db`)}\nadapters: [ { name: hook, type: webhook, url: "${hook.url}/in" } ]\n${extraYaml}`,
    );
    return p;
  };
  const start = async () =>
    (await Promise.all([1, 2].map((n) => spawnServer(['--port', '0', '--store', redis.url, '--config', config(n)])))) as [ServerProcess, ServerProcess];
  const h: HookedReplicas = {
    redis,
    hook,
    replicas: await start(),
    async restart() {
      await Promise.all(h.replicas.map((r) => r.stop('SIGKILL')));
      h.replicas = await start();
      return h.replicas;
    },
    deliveredFor: (element_id) => hook.requests.filter((r) => r.body.data?.element_id === element_id).map((r) => `${r.body.action}:${r.body.severity}`),
    async stop() {
      await Promise.all(h.replicas.map((r) => r.stop('SIGKILL')));
      await hook.close();
      await redis.stop();
      dir.remove();
    },
  };
  return h;
}
