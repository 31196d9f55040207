import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnServer, type ServerProcess } from './process.js';

/**
 * Starts `onceonly serve` replicas on one store with the DEFAULT fail-open
 * settings (only each replica's own journal path is set) and one webhook
 * adapter, pushing each into `into` as it starts, so the caller stops every
 * one that started even when a later one fails. The fail-open tests need the
 * defaults; test/helpers/hooked-replicas.ts relaxes them.
 */
export async function defaultReplicas(store: string, hookUrl: string, dir: string, into: ServerProcess[], count = 2): Promise<void> {
  for (let n = 1; n <= count; n++) {
    const cfg = join(dir, `c${n}.yaml`);
    writeFileSync(cfg, `failopen: { journal_path: ${join(dir, `j${n}.db`)} }\nadapters: [ { name: hook, type: webhook, url: "${hookUrl}/in" } ]\n`);
    into.push(await spawnServer(['--port', '0', '--store', store, '--config', cfg]));
  }
}
