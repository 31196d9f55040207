/**
 * Postgres decision benchmark (issue 8), on the machine's Postgres, in a
 * schema of its own dropped afterwards, with synchronous_commit as the server
 * has it (on by default). One run measures:
 *   - sequential latency of onceonly's decision (one transaction under the
 *     key's advisory lock) vs the seed's algorithm in SQL (INSERT … ON
 *     CONFLICT DO NOTHING, then SELECT and UPDATE: several statements, racy);
 *   - concurrent decisions/s (64 in flight, 50% new / 40% unchanged / 10% changed);
 *   - the ceiling: one bare `INSERT … ON CONFLICT DO UPDATE` per decision.
 * Prints a table and writes it into docs/benchmarks.md. No assertions: figures.
 *
 *   npm run bench:postgres        (N=… to change the operation count)
 */
import os from 'node:os';
import pg from 'pg';
import { systemClock } from '../src/core/clock.js';
import { openPool } from '../src/store/postgres/pool.js';
import { freshSchema, PG_URL } from '../test/helpers/postgres.js';
import { concurrent, sequential, writeSection, type Decide } from './workload.js';

const N = Number(process.env.N ?? 20_000);
const SEQ = Math.min(N, 5_000);
const INFLIGHT = 64;
const TTL = 3_600_000;

const s = await freshSchema();
const store = s.open(systemClock);
const raw = openPool(PG_URL, s.schema, 16);
try {
  const onceonly: Decide = (key, fp) => store.decideIncident({ tenant: 'default', key, fingerprint: fp, ttlMs: TTL });
  // The seed's algorithm in SQL: claim if absent; on a hit read, compare, and maybe write.
  const seed: Decide = async (key, fp) => {
    const now = Date.now();
    const claimed = await raw.query(
      `INSERT INTO incidents (tenant, key, fingerprint, created_at, last_seen_at, refires, updates, expires_at) VALUES ('seed', $1, $2, $3, $3, 0, 0, $4) ON CONFLICT DO NOTHING`,
      [key, fp, now, now + TTL],
    );
    if (claimed.rowCount === 1) return 'CREATE';
    const { rows } = await raw.query<{ fingerprint: string }>(`SELECT fingerprint FROM incidents WHERE tenant = 'seed' AND key = $1`, [key]);
    await raw.query(`UPDATE incidents SET fingerprint = $2, last_seen_at = $3, expires_at = $4 WHERE tenant = 'seed' AND key = $1`, [key, fp, now, now + TTL]);
    return rows[0]?.fingerprint === fp ? 'SUPPRESS' : 'UPDATE';
  };
  // The ceiling: one statement per decision, no decision logic at all.
  const ceiling: Decide = (key, fp) =>
    raw.query(
      `INSERT INTO incidents (tenant, key, fingerprint, created_at, last_seen_at, refires, updates, expires_at) VALUES ('ceil', $1, $2, $3, $3, 0, 0, $4)
       ON CONFLICT (tenant, key) DO UPDATE SET fingerprint = excluded.fingerprint, last_seen_at = excluded.last_seen_at, refires = incidents.refires + 1`,
      [key, fp, Date.now(), Date.now() + TTL],
    );

  const seqO = await sequential(onceonly, SEQ, 'so');
  const seqS = await sequential(seed, SEQ, 'ss');
  const seqC = await sequential(ceiling, SEQ, 'sc');
  const tO = await concurrent(onceonly, N, INFLIGHT, 'co');
  const tS = await concurrent(seed, N, INFLIGHT, 'cs');
  const tC = await concurrent(ceiling, N, INFLIGHT, 'cc');
  const admin = new pg.Pool({ connectionString: PG_URL, max: 1 });
  const version = (await admin.query<{ v: string }>("SELECT current_setting('server_version') AS v")).rows[0]!.v;
  const sync = (await admin.query<{ s: string }>("SELECT current_setting('synchronous_commit') AS s")).rows[0]!.s;
  await admin.end();

  const f = (x: number) => x.toFixed(0);
  const lat = (x: { p50: number; p99: number; p999: number }) => `${f(x.p50)} / ${f(x.p99)} / ${f(x.p999)}`;
  const table = [
    `Measured ${new Date().toISOString().slice(0, 10)} on ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, Node ${process.version}, PostgreSQL ${version} (synchronous_commit ${sync}); N=${N} (sequential ${SEQ}), same mix.`,
    '',
    '| measure | onceonly (one transaction, key lock) | seed algorithm in SQL (racy) | bare INSERT … ON CONFLICT (ceiling) | ratios |',
    '| --- | --- | --- | --- | --- |',
    `| sequential decision, µs (p50 / p99 / p999) | ${lat(seqO)} | ${lat(seqS)} | ${lat(seqC)} | p50 ${(seqO.p50 / seqC.p50).toFixed(1)}× the ceiling's |`,
    `| concurrent decisions/s, ${INFLIGHT} in flight | ${tO} | ${tS} | ${tC} | ${(tO / tS).toFixed(2)}× seed, ${(tO / tC).toFixed(2)}× ceiling |`,
  ].join('\n');
  console.log(table);
  if (await writeSection('postgres', table)) console.log('\nwritten to docs/benchmarks.md');
} finally {
  await store.close();
  await raw.end();
  await s.drop();
}
