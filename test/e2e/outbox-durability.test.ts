// needs: postgres
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import { fire } from '../helpers/load.js';
import { spawnServer } from '../helpers/process.js';
import { tempDir } from '../helpers/tmp.js';
import pg from 'pg';
import { PG_URL } from '../helpers/postgres.js';

// The outbox is written in the decision's own transaction, and an answer is
// sent only after it committed: so whatever was answered survives a SIGKILL,
// either still in the outbox or already fanned out to a delivery (here to an
// adapter nobody listens on, so nothing is delivered and nothing leaves).
type Row = { kind: string; action: string; key: string; summary: string; data: string };
const BOTH = `SELECT kind, action, key, summary, data FROM outbox UNION ALL SELECT kind, action, key, summary, data FROM deliveries`;

/** Decides a known mix on `store`, SIGKILLs the server, then reads what `read` finds left behind. */
async function killAndCount(store: string, read: () => Promise<Row[]>) {
  const dir = tempDir();
  const config = join(dir.path, 'c.yaml');
  // This is about durability, not fail-open: a timeout no loaded machine reaches.
  writeFileSync(
    config,
    `failopen: { timeout_ms: 10000, journal_path: ${join(dir.path, 'journal.db')} }\ndelivery: { base_delay_ms: 600000, max_delay_ms: 600000 }\nadapters: [ { name: hook, type: webhook, url: "http://127.0.0.1:9/nobody" } ]\n`,
  );
  const s = await spawnServer(['--port', '0', '--store', store, '--config', config]);
  try {
    const incidents = Array.from({ length: 100 }, (_, i) => ({
      url: `${s.url}/v1/incidents`,
      body: { element_id: `olt-${i}`, fault_class: 'LOS', root_cause_id: 'cut', severity: 'MAJOR', summary: `olt-${i} down` },
    }));
    const a1 = await fire([...incidents, ...incidents], 32); // each twice: 100 CREATE + 100 SUPPRESS
    const a2 = await fire(
      incidents.slice(0, 10).map((x) => ({ ...x, body: { ...x.body, severity: 'CRITICAL' } })),
      10,
    );
    const spc = (rule: string, p: string) => ({
      url: `${s.url}/v1/violations`,
      body: { process_id: p, rule_id: rule, timestamp: 1770000000, value: 13, center: 10, ucl: 12, lcl: 8 },
    });
    const a3 = await fire([spc('nelson_1', 'etch'), spc('nelson_1', 'etch'), spc('we_zone_b', 'cmp')], 1);
    const ev = (seq: number, state: string) => ({
      url: `${s.url}/v1/events`,
      body: { tenant_id: 'acme', device_id: 'pos-1', boot_id: 'b', sequence: seq, state, observed_at: '2026-11-30T12:00:00Z' },
    });
    const a4 = await fire([ev(1, 'IDLE'), ev(2, 'BUSY'), ev(2, 'BUSY')], 1);
    assert.ok([...a1, ...a2, ...a3, ...a4].every((a) => a.status === 200));
    assert.equal(await s.stop('SIGKILL'), null);

    const out = (await read()).map((r) => ({ ...r, data: JSON.parse(r.data) as unknown }));
    const count = (kind: string, action: string) => out.filter((e) => e.kind === kind && e.action === action).length;
    assert.equal(count('incident', 'create'), 100);
    assert.equal(count('incident', 'update'), 10);
    assert.equal(count('violation', 'create'), 2, 'nelson_1 once (repeat suppressed) and we_zone_b (MINOR routes by default)');
    assert.equal(count('event', 'notify'), 1);
    assert.equal(out.length, 113);
    const first = out.find((e) => e.key === a1[0]!.body.dedup_key && e.action === 'create')!;
    assert.equal(first.summary, 'olt-0 down');
    assert.deepEqual(first.data, { element_id: 'olt-0', fault_class: 'LOS', root_cause_id: 'cut', cleared: false });
  } finally {
    await s.stop('SIGKILL');
    dir.remove();
  }
}

test('every answered CREATE, UPDATE, routed violation and transition is in the outbox or a delivery after SIGKILL (SQLite)', async () => {
  const dir = tempDir();
  const db = join(dir.path, 'o.db');
  try {
    await killAndCount(`sqlite:${db}`, async () => {
      const file = new Database(db, { readonly: true });
      const rows = file.prepare(BOTH).all() as Row[];
      file.close();
      return rows;
    });
  } finally {
    dir.remove();
  }
});

test('the same on Postgres', async () => {
  const schema = `oo_kill_${process.pid}`;
  const admin = new pg.Pool({ connectionString: PG_URL, max: 1 });
  try {
    await killAndCount(`${PG_URL}?schema=${schema}`, async () => (await admin.query<Row>(BOTH.replaceAll(' FROM ', ` FROM "${schema}".`))).rows);
  } finally {
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await admin.end();
  }
});
