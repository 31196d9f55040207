// needs: postgres
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { fire } from '../helpers/load.js';
import { PG_URL } from '../helpers/postgres.js';
import { postJson, runCli, spawnServer } from '../helpers/process.js';
import { tempDir } from '../helpers/tmp.js';
import { inProcessServer } from '../helpers/server.js';

test('ledger mode on Postgres: identities never expire, and the audit rows match the decisions one for one', async () => {
  const schema = `oo_ledger_${process.pid}`;
  const dir = tempDir();
  const config = join(dir.path, 'c.yaml');
  // Fail-open would make decisions outside Postgres (and its audit): a timeout no loaded machine reaches.
  writeFileSync(
    config,
    `failopen: { timeout_ms: 10000, journal_path: ${join(dir.path, 'journal.db')} }\nincidents: { retention: forever }\nevents: { retention: forever }\nviolations: { retention: forever }\n`,
  );
  const s = await spawnServer(['--port', '0', '--store', `${PG_URL}?schema=${schema}`, '--config', config]);
  const admin = new pg.Pool({ connectionString: PG_URL, max: 1 });
  try {
    const incident = (k: number, severity = 'MAJOR') => ({
      url: `${s.url}/v1/incidents`,
      body: { element_id: `olt-${k}`, fault_class: 'LOS', root_cause_id: 'cut', severity },
    });
    const shots = [
      ...Array.from({ length: 100 }, (_, k) => incident(k)),
      ...Array.from({ length: 100 }, (_, k) => incident(k)),
      ...Array.from({ length: 10 }, (_, k) => incident(k, 'CRITICAL')),
    ];
    const answers = await fire(shots, 16);
    assert.ok(answers.every((a) => a.status === 200));
    const closed = answers.slice(0, 5).map((a) => a.body.dedup_key as string);
    for (const key of closed) assert.equal((await fetch(`${s.url}/v1/incidents/${key}`, { method: 'DELETE' })).status, 204);
    assert.equal((await postJson(`${s.url}/v1/incidents`, { element_id: '' })).status, 400, 'a refused request is not a decision');
    const ev = { tenant_id: 'acme', device_id: 'pos-1', boot_id: 'b', sequence: 1, state: 'IDLE', observed_at: '2026-11-30T12:00:00Z' };
    await postJson(`${s.url}/v1/events`, ev);
    await postJson(`${s.url}/v1/events`, ev);
    const v = { process_id: 'etch', rule_id: 'nelson_1', timestamp: 1770000000, value: 13, center: 10, ucl: 12, lcl: 8 };
    const vk = (await postJson(`${s.url}/v1/violations`, v)).body.key as string;
    await postJson(`${s.url}/v1/violations`, v);

    // One audit row per decision, with the same decision, and a request id each.
    const { rows } = await admin.query<{ kind: string; key: string; decision: string; reason: string; replica: string; request_id: string }>(
      `SELECT kind, key, decision, reason, replica, request_id FROM "${schema}".audit ORDER BY id`,
    );
    const tally = (xs: Array<[string, string]>) => xs.map(([k, d]) => `${k} ${d}`).sort();
    const incidentRows = rows.filter((r) => r.kind === 'incidents' && r.decision !== 'CLOSE');
    // With its reason: a quick repeat the answer calls SUPPRESS/unchanged is not lost_race in the trail.
    assert.deepEqual(
      tally(incidentRows.map((r) => [r.key, `${r.decision}/${r.reason}`])),
      tally(answers.map((a) => [a.body.dedup_key, `${a.body.decision}/${a.body.reason}`])),
    );
    assert.equal(rows.filter((r) => r.decision === 'CLOSE').length, 5);
    assert.deepEqual(
      rows.filter((r) => r.kind === 'events').map((r) => r.decision),
      ['applied', 'duplicate'],
    );
    assert.deepEqual(
      rows.filter((r) => r.kind === 'violations').map((r) => `${r.decision}/${r.reason}`),
      ['CREATE/claimed', 'SUPPRESS/repeat'],
    );
    assert.equal(new Set(rows.map((r) => r.request_id)).size, rows.length, 'each row names its own request');
    assert.ok(rows.every((r) => /^.+:\d+$/.test(r.replica)));
    console.log(`audit rows: ${rows.length} for ${answers.length + 5 + 4} decisions`);

    // Forever: the expiry is a century away.
    const live = (await (await fetch(`${s.url}/v1/incidents/${answers[10]!.body.dedup_key}`)).json()) as { expires_at: string };
    assert.ok(Date.parse(live.expires_at) > Date.now() + 50 * 365 * 86_400_000, live.expires_at);

    // The trail of one key over HTTP and from the CLI.
    const trail = (await (await fetch(`${s.url}/v1/audit?key=${closed[0]}`)).json()) as { audit: Array<{ decision: string; request_id: string }> };
    assert.deepEqual(
      trail.audit.map((r) => r.decision),
      ['CREATE', 'SUPPRESS', 'UPDATE', 'CLOSE'],
    );
    const cli = runCli(['audit', vk, '--url', s.url]);
    assert.equal(cli.status, 0, cli.stderr);
    assert.match(cli.stdout, /violations {2}CREATE\/claimed/);
    assert.match(cli.stdout, /violations {2}SUPPRESS\/repeat/);
  } finally {
    await s.stop();
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await admin.end();
    dir.remove();
  }
});

test('a store without an audit trail says so; a missing key is a clear 400', async () => {
  const s = await inProcessServer({ store: 'memory' });
  try {
    const none = await s.get('/v1/audit?key=dedup:00000000000000000000000000000000');
    assert.equal(none.status, 404);
    assert.match(none.body.error.message, /keeps no audit trail: ledger mode .* postgres/);
    const bad = await s.get('/v1/audit');
    assert.deepEqual([bad.status, bad.body.error.issues[0].path], [400, 'key']);
  } finally {
    await s.stop();
  }
});

test("ledger mode: a key's history reads its older decisions from the audit, past the history's own bound", async () => {
  const schema = `oo_ledger_h_${process.pid}`;
  const admin = new pg.Pool({ connectionString: PG_URL, max: 1 });
  // The history keeps a key's newest 2 events; the audit keeps every decision.
  const s = await inProcessServer({
    store: `${PG_URL}?schema=${schema}`,
    config: 'incidents: { retention: forever, race_window_ms: 0 }\nhistory: { max_events: 2 }\n',
  });
  try {
    const post = async (severity: string) => {
      const r = await s.post('/v1/incidents', { element_id: 'olt-7', fault_class: 'LOS', root_cause_id: 'cut', severity });
      s.clock.advance(1000);
      return r.body as { dedup_key: string; decision: string };
    };
    const key = (await post('MAJOR')).dedup_key;
    for (const sev of ['MAJOR', 'MAJOR', 'MAJOR', 'CRITICAL', 'CRITICAL', 'CRITICAL']) await post(sev);
    assert.equal((await fetch(`${s.url}/v1/incidents/${key}`, { method: 'DELETE' })).status, 204);

    const { body } = await s.get(`/v1/incidents/${key}/history`);
    const events = body.events as Array<Record<string, unknown>>;
    const line = (e: Record<string, unknown>) =>
      `${e.source ?? 'history'} ${e.type} ${e.decision ?? ''}${e.reason ? `/${e.reason}` : ''}${e.count ? ` ×${e.count}` : ''}`.trim();
    assert.deepEqual(events.map(line), [
      'audit decision CREATE/new',
      'audit decision SUPPRESS/unchanged ×3',
      'audit decision UPDATE/severity',
      'history decision SUPPRESS/unchanged ×2',
      'history closed',
    ]);
    // The audit's run keeps its times as a history run does: three repeats a second apart.
    const run = events[1]!;
    assert.deepEqual([Date.parse(run.last_at as string) - Date.parse(run.first_at as string), run.max_gap_ms], [2000, 1000]);
    assert.ok(events.slice(0, 3).every((e) => typeof e.request_id === 'string' && e.request_id !== 'none'));
    // The history table itself holds its bound.
    const kept = await admin.query(`SELECT count(*)::int AS n FROM "${schema}".history WHERE key = $1`, [key]);
    assert.equal(kept.rows[0].n, 2);
  } finally {
    await s.stop();
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await admin.end();
  }
});
