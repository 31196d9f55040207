/**
 * Section: keyed. What an Idempotency-Key costs one tenant's throughput. A
 * key's record and the tenant's key count and bytes are changed in one
 * transaction that locks the tenant's count first (exact across replicas),
 * so every keyed request of one tenant passes through that one row in turn.
 * One `onceonly serve` per store, one tenant, 16 connections posting
 * distinct incidents for a few seconds: without a key (the baseline, same
 * run), then each with a fresh key. Prints requests a second and the ratio.
 * `npm run bench -- keyed`.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { tempDir } from '../../test/helpers/tmp.js';
import { startListening } from '../http/wrk.js';
import { table, type Section } from '../report.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const TOKEN = 'bench-keyed-tenant-token-01';
const CONNECTIONS = 16;
const SECONDS = Number(process.env.KEYED_SECONDS ?? 5);
const PG_URL = process.env.ONCEONLY_TEST_PG ?? 'postgres://postgres@127.0.0.1:5432/test';

/** Requests a second of CONNECTIONS loops posting distinct incidents, each with a fresh key when `keyed`. */
async function rate(base: string, keyed: boolean, tag: string): Promise<{ perSecond: number; failed: number }> {
  let done = 0;
  let failed = 0;
  const end = performance.now() + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async (_, c) => {
      for (let i = 0; performance.now() < end; i++) {
        const res = await fetch(`${base}/v1/incidents`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${TOKEN}`,
            'content-type': 'application/json',
            ...(keyed ? { 'idempotency-key': randomUUID() } : {}),
          },
          body: JSON.stringify({ element_id: `${tag}-${c}-${i}`, fault_class: 'LOS', root_cause_id: 'cut', severity: 'MAJOR' }),
        });
        await res.arrayBuffer();
        if (res.status === 200) done++;
        else failed++;
      }
    }),
  );
  return { perSecond: done / SECONDS, failed };
}

export async function keyedSection(log: (s: string) => void): Promise<Section> {
  const dir = tempDir('onceonly-bench-keyed-');
  const config = join(dir.path, 'onceonly.yml');
  writeFileSync(
    config,
    `tenants:\n  - { id: solo, tokens: [${TOKEN}], rate_limit: { per_second: 1000000, burst: 1000000 } }\nfailopen: { timeout_ms: 2000, journal_path: ${JSON.stringify(join(dir.path, 'journal.db'))} }\n`,
  );
  const schema = `oo_bench_keyed_${process.pid}`;
  const stores: Array<[string, string]> = [
    ['SQLite', `sqlite:${join(dir.path, 'k.db')}`],
    ['Postgres', `${PG_URL}?schema=${schema}`],
  ];
  const rows: Array<Array<string | number>> = [];
  try {
    for (const [name, url] of stores) {
      const srv = await startListening(process.execPath, ['dist/cli/main.js', 'serve', '--port', '0', '--store', url, '--config', config], {}, ROOT);
      try {
        await rate(srv.url, false, 'warm');
        const plain = await rate(srv.url, false, 'plain');
        const keyed = await rate(srv.url, true, 'keyed');
        log(`keyed: ${name}: ${plain.perSecond.toFixed(0)} req/s without a key, ${keyed.perSecond.toFixed(0)} with (${keyed.failed} refused)`);
        rows.push([name, plain.perSecond.toFixed(0), keyed.perSecond.toFixed(0), (keyed.perSecond / plain.perSecond).toFixed(2), plain.failed + keyed.failed]);
      } finally {
        await srv.stop();
      }
    }
  } finally {
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await admin.end();
    dir.remove();
  }
  return {
    title: 'What an Idempotency-Key costs one tenant',
    body: [
      `One server per store, one tenant, ${CONNECTIONS} connections posting distinct incidents for ${SECONDS} s each: without a key (the baseline, same run), then each with a fresh Idempotency-Key. A keyed request also claims the key and counts it against the tenant's bounds, in one transaction that locks the tenant's count first (on Postgres one server-side function for the claim and one for the answer), so one tenant's keyed requests pass that row one at a time.`,
      table(['store', 'req/s without a key', 'req/s with a key', 'keyed / plain', 'answers not 200'], rows),
    ],
    targets: [],
  };
}
