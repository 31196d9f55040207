#!/usr/bin/env node
// `npm run mutate`: plants each fault below in src/, one at a time, runs the
// tests named for the guarantee it breaks, and restores the file. A fault the
// tests do not catch (they pass with it planted) fails the run. Not part of
// `npm test`: it reruns suites many times (several minutes). Add a fault here
// with every new guarantee, named for the test that guards it.
//
//   npm run mutate                 every fault
//   npm run mutate -- violation    only faults whose name contains "violation"
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;

/**
 * name: what breaks; file: where; find: text that occurs exactly once there;
 * replace: the fault; tests: the files that must catch it (and `pattern`, a
 * test-name filter); build: the tests run the built CLI (dist/).
 */
const FAULTS = [
  {
    name: 'a route without an access rule is open',
    file: 'src/http/access.ts',
    find: "    if (doc?.access === 'open') return;",
    replace: "    if (doc?.access === 'open' || !doc) return;",
    tests: ['test/integration/access-deny-by-default.test.ts'],
  },
  {
    name: "a violation's claim lives one window, not two",
    file: 'src/engine/violations.ts',
    find: ': 2 * cfg.window_seconds * 1000, outbox, origin)',
    replace: ': cfg.window_seconds * 1000, outbox, origin)',
    tests: ['test/integration/http-violations.test.ts'],
  },
  {
    name: 'a Jira create without its issue type',
    file: 'src/delivery/adapters/jira.ts',
    find: '          issuetype: { name: c.issue_type },\n',
    replace: '',
    tests: ['test/integration/jira-deployments.test.ts'],
    pattern: 'issue type',
  },
  {
    name: "one tenant's silence mutes another tenant's alert",
    file: 'src/mute/silence-cache.ts',
    find: "    for (const l of this.byTenant.get(tenant)?.values() ?? []) {\n      if (silenceState(l.silence, now) === 'active' && matchesAll(l.matchers, labels))",
    replace:
      "    for (const l of [...this.byTenant.values()].flatMap((m) => [...m.values()])) {\n      if (silenceState(l.silence, now) === 'active' && matchesAll(l.matchers, labels))",
    tests: ['test/integration/silence-tenants.test.ts'],
  },
  {
    name: "a replay calls another replica's key claimed, not merged (Redis)",
    file: 'src/store/redis/lua/reconcile-incident.lua',
    find: "    outcome = 'merged'",
    replace: "    outcome = 'claimed'",
    tests: ['test/integration/failopen-merge.test.ts'],
  },
  {
    name: "a replay calls another replica's key claimed, not merged (Postgres)",
    // Migration 017 replaced the function 006 made: the fault goes where the function now is.
    file: 'src/store/postgres/migrations/017_routes.sql',
    find: "  outcome := CASE WHEN live THEN 'merged' ELSE 'claimed' END;",
    replace: "  outcome := 'claimed';",
    tests: ['test/integration/failopen-merge.test.ts'],
    pattern: 'postgres',
  },
  {
    name: 'Redis scripts sent whole every time, not called by SHA',
    file: 'src/store/redis/connection.ts',
    find: "    return await send(keys[0]!, ['EVALSHA', script.sha, ...rest]);",
    replace: "    return await send(keys[0]!, ['EVAL', script.source, ...rest]);",
    tests: ['test/contract/redis.test.ts'],
    pattern: 'called by SHA',
  },
  {
    name: 'ServiceNow reopens a Closed record (refused by its ACL: a dead letter)',
    file: 'src/delivery/adapters/servicenow.ts',
    find: '.filter((r) => r.state !== c.closed_state && r.state !== c.duplicate_state)',
    replace: '.filter((r) => r.state !== c.duplicate_state)',
    tests: ['test/integration/delivery.test.ts'],
    pattern: 'was Closed',
  },
  {
    name: "a tenant's Idempotency-Keys are not bounded by count (memory and SQL stores)",
    file: 'src/store/contract/requests.ts',
    find: '  return q.keys >= maxKeys ? null : { keys: 1, bytes: 0 };',
    replace: '  return { keys: 1, bytes: 0 };',
    tests: ['test/integration/http-idempotency-bounds.test.ts', 'test/contract/memory.test.ts'],
    pattern: 'request idempotency|Idempotency-Key bounds',
  },
  {
    name: "a tenant's Idempotency-Keys are not bounded by count (Redis)",
    file: 'src/store/redis/lua/request-reserve.lua',
    find: "if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end\n",
    replace: '',
    tests: ['test/contract/redis.test.ts'],
    pattern: 'request idempotency',
  },
  {
    name: 'a silence reload reads ended silences too',
    file: 'src/mute/silence-cache.ts',
    find: 'this.store.list(null, this.now?.())',
    replace: 'this.store.list(null)',
    tests: ['test/integration/silence-cache-reload.test.ts'],
  },
  {
    name: "the ledger's audit row says lost_race for a plain repeat",
    file: 'src/store/postgres/pg-incidents.ts',
    find: "    if (audit && outcome === 'unchanged') await this.relabel(claim, now, record.createdAt, replica, requestId, origin);\n",
    replace: '',
    tests: ['test/e2e/postgres-ledger.test.ts'],
    build: true,
  },
  {
    name: 'Postgres connections opened unpaced: a refusing port tried once per query',
    file: 'src/store/postgres/pool.ts',
    find: 'Client: gatedClient(options.gate ?? new ConnectGate()), ',
    replace: '',
    tests: ['test/integration/postgres-connect-gate.test.ts'],
  },
  {
    name: 'a timed-out Postgres connect shuts the gate (a busy machine fails every query at once)',
    file: 'src/store/postgres/connect-gate.ts',
    find: '    if (err && this.now() - started >= this.timeoutMs) return;\n',
    replace: '',
    tests: ['test/integration/postgres-connect-gate.test.ts'],
  },
  {
    name: "Postgres probes wait in the pool's queue",
    file: 'src/store/postgres/pg-store.ts',
    find: '    if (this.probe) await this.probe.check();\n    else await this.ping();',
    replace: '    await this.ping();',
    tests: ['test/integration/postgres-probe.test.ts'],
  },
  {
    name: 'a hung Postgres probe makes every later probe wait behind it',
    file: 'src/store/postgres/probe-connection.ts',
    find: '    if (this.open && [...this.open.pending].some((p) => p.at <= now - this.stuckMs)) void this.open.drop();\n',
    replace: '',
    tests: ['test/integration/postgres-probe.test.ts'],
  },
  {
    name: "a group's queued updates sent one by one, not folded into the last",
    file: 'src/delivery/gate/fold-stage.ts',
    find: "(out.entry.kind === 'group' && out.entry.action === 'update')",
    replace: "(out.entry.kind === 'group' && out.entry.action === 'never')",
    tests: ['test/integration/grouping-bounds.test.ts'],
  },
  {
    name: 'an import runs back up the layers (core using config types)',
    file: 'src/core/identity.ts',
    find: "import { hash } from 'node:crypto';\n",
    replace: "import { hash } from 'node:crypto';\nimport type { Config } from '../config/schema.js';\nexport type Planted = Config;\n",
    tests: ['test/unit/layers.test.ts'],
  },
  {
    name: "a member's group written with a raw SET, past the layout guard",
    file: 'src/store/redis/redis-groups.ts',
    find: "    await this.conn.evalScript(scripts.groupRemember, [await this.memberKey(tenant, member)], [groupKey ?? '']);\n",
    replace: "    const k = await this.memberKey(tenant, member);\n    await this.conn.send(k, groupKey ? ['SET', k, groupKey] : ['DEL', k]);\n",
    tests: ['test/integration/redis-migrate-shards.test.ts'],
    pattern: 'raw commands',
  },
  {
    name: 'the SQLite lease walks a delivery line in text order (no line index)',
    file: 'src/store/sqlite/migrations/014_delivery_line_index.sql',
    find: "CREATE INDEX IF NOT EXISTS deliveries_line ON deliveries (kind, tenant, key, adapter, CAST(substr(id, 1, instr(id, '.') - 1) AS INTEGER));",
    replace: 'SELECT 1;',
    tests: ['test/contract/sqlite.test.ts'],
    pattern: 'long line',
  },
  {
    name: 'an Alertmanager refusal checks every alert, past the issues it lists',
    file: 'src/core/validation.ts',
    find: '    if (raw.length < MAX_ISSUES_SHOWN - 1 || i === list.length - 1) continue;',
    replace: '    continue;',
    tests: ['test/unit/alertmanager-parse.test.ts'],
  },
  {
    name: 'alerts per post fixed at 1,000, not limits.alerts_per_post',
    file: 'src/http/routes/alertmanager.ts',
    find: '      const most = config().limits.alerts_per_post;',
    replace: '      const most = 1000;',
    tests: ['test/integration/http-limits.test.ts'],
    pattern: 'config value',
  },
  {
    name: 'ended silences kept past limits.ended_silences_per_tenant',
    file: 'src/http/routes/silences.ts',
    find: 'ended: limits.ended_silences_per_tenant }',
    replace: 'ended: 1000 }',
    tests: ['test/integration/http-silences.test.ts'],
    pattern: 'config values',
  },
  {
    name: 'config errors mask the words between two apostrophes',
    file: 'src/config/secret-refs.ts',
    find: "(?<![\\p{L}\\p{N}])'[^'\\n]*'(?![\\p{L}\\p{N}])/gu",
    replace: "'[^']*'/gu",
    tests: ['test/unit/mask-secrets.test.ts'],
  },
  {
    name: 'Redis keeps an expired incident record long past its grace',
    file: 'src/store/redis/lua/lib/incident.lua',
    find: "incident_value(created, now - created, ttl, refires, updates, fp, route), 'PX', ttl + grace)",
    replace: "incident_value(created, now - created, ttl, refires, updates, fp, route), 'PX', (ttl + grace) * 10)",
    tests: ['test/contract/redis.test.ts'],
    pattern: 'live count and sweep',
  },
  {
    name: "Redis keeps an event's seen-marker past the retention",
    file: 'src/store/redis/lua/apply-event.lua',
    find: "redis.call('SET', KEYS[2], '1', 'PX', ARGV[7])",
    replace: "redis.call('SET', KEYS[2], '1', 'PX', ARGV[7] * 10)",
    tests: ['test/integration/events-model.test.ts'],
    pattern: 'Redis',
  },
  {
    name: 'a record kind the shard move forgets (flap lists)',
    file: 'src/store/redis/reshard.ts',
    find: "    case 'fl':\n      return of('flap', unLpBytes(rest), ([t, k]) => adoptSets.flap(t!, k!), 2);\n",
    replace: '',
    tests: ['test/unit/shard-move-kinds.test.ts'],
  },
  {
    name: 'a raw write let through the Redis layout seam',
    file: 'src/store/redis/layout-seam.ts',
    find: '        if (!READS.has(command)) return Promise.reject(new UnguardedWriteError(command));\n',
    replace: '',
    tests: ['test/integration/redis-migrate-shards.test.ts'],
    pattern: 'refuses any raw write',
  },
  {
    name: "an Alertmanager post's alerts validated before they are charged to the rate limit",
    file: 'src/http/routes/alertmanager.ts',
    find: '      chargeItems(req, config(), limiter, n);\n      const payload = parseAlertmanager(req.body);\n',
    replace: '      const payload = parseAlertmanager(req.body);\n      chargeItems(req, config(), limiter, n);\n',
    tests: ['test/integration/http-limits.test.ts'],
    pattern: 'invalid alerts',
  },
  {
    name: "a routing tree's continue ignored (the first matching child always stops)",
    file: 'src/core/route.ts',
    find: '    if (walk(child, labels, taken) && !child.continue) break;\n',
    replace: '    if (walk(child, labels, taken)) break;\n',
    tests: ['test/e2e/routes.test.ts'],
    pattern: 'routes as written',
  },
  {
    name: 'a matcher reads a label a label set inherits (constructor reads as a function)',
    file: 'src/core/matcher.ts',
    find: "(Object.hasOwn(labels, name) ? (labels[name] ?? '') : '')",
    replace: "(labels[name] ?? '')",
    tests: ['test/unit/matcher.test.ts'],
  },
  {
    name: 'a Jira summary sent as given (Jira refuses its line breaks)',
    file: 'src/delivery/adapters/jira.ts',
    find: 'cutText(oneLine(e.summary) ||',
    replace: 'cutText(e.summary ||',
    tests: ['test/integration/jira-limits.test.ts'],
  },
  {
    name: 'field templates read inherited properties (constructor renders as a function)',
    file: 'src/core/template.ts',
    find: '  ownPropertyOnly: true,\n',
    replace: '  ownPropertyOnly: false,\n',
    tests: ['test/integration/ticket-fields.test.ts'],
  },
  {
    name: "a route test run with another tenant's label",
    file: 'src/http/routes/route-test.ts',
    find: 'if (labels.tenant !== undefined && labels.tenant !== req.tenant)',
    replace: 'if (labels.tenant === "never")',
    tests: ['test/integration/route-test.test.ts'],
  },
  {
    name: 'a group change the store refused settled as applied',
    file: 'src/delivery/gate/group-stage.ts',
    find: '      await applier.apply(g.d.entry);\n',
    replace: '      await applier.apply(g.d.entry).catch(() => {});\n',
    tests: ['test/integration/group-stage.test.ts'],
  },
  {
    name: 'the mutes asked after the group and send stages (a muted group ticket goes out)',
    file: 'src/delivery/worker.ts',
    find: '        ...(m ? [muteStage(m.source, m.now)] : []),\n        ...(m && o.holds ? [holdStage(o.holds, m.now)] : []),\n        foldStage(),\n        ...(o.groups ? [groupStage(o.groups)] : []),\n        sendStage(),\n',
    replace:
      '        ...(m && o.holds ? [holdStage(o.holds, m.now)] : []),\n        foldStage(),\n        ...(o.groups ? [groupStage(o.groups)] : []),\n        sendStage(),\n        ...(m ? [muteStage(m.source, m.now)] : []),\n',
    tests: ['test/integration/group-stage.test.ts'],
  },
  {
    name: "an incident's update goes where its claim's labels route it, not where its create went",
    file: 'src/store/contract/outbox.ts',
    find: 'data: o.data, at, ...routeOf(rec) };',
    replace: 'data: o.data, at, ...(o.route ? { route: o.route } : {}) };',
    tests: ['test/integration/routing.test.ts'],
    pattern: 'memory',
  },
  {
    name: "an incident's update goes where its claim routes it (Redis)",
    file: 'src/store/redis/lua/lib/incident.lua',
    find: "        outbox('update', route)",
    replace: "        outbox('update', a[10])",
    tests: ['test/contract/redis.test.ts'],
    pattern: 'keeps its route',
  },
  {
    name: "an incident's update goes where its claim routes it (Postgres)",
    file: 'src/store/postgres/migrations/017_routes.sql',
    find: '    route := r.route; identity := r.identity;\n',
    replace: '    route := p_route; identity := r.identity;\n',
    tests: ['test/contract/postgres.test.ts'],
    pattern: 'keeps its route',
  },
  {
    name: "fan-out ignores an entry's route (Redis)",
    file: 'src/store/redis/lua/fan-out.lua',
    find: "if not routed or routed[ARGV[a]] or string.sub(ARGV[a], 1, 1) == '@' then",
    replace: 'if true then',
    tests: ['test/contract/redis.test.ts'],
    pattern: 'route',
  },
  {
    name: 'fan-out leaves an internal line out of a routed entry (the group line misses routed members)',
    file: 'src/core/outbox.ts',
    find: 'lines.filter((l) => l.startsWith(INTERNAL_PREFIX) || route.includes(l))',
    replace: 'lines.filter((l) => route.includes(l))',
    tests: ['test/contract/memory.test.ts'],
    pattern: 'route',
  },
  {
    name: 'a later arrival replaces the identity its create received (Redis)',
    file: 'src/store/redis/lua/lib/incident.lua',
    // decide-incident's call of keep_shown (lib/record.lua): a fresh start on every arrival
    find: '    keep_shown(k[7], fresh, a[14], a[15], ttl + grace)',
    replace: '    keep_shown(k[7], true, a[14], a[15], ttl + grace)',
    tests: ['test/contract/redis.test.ts'],
    pattern: 'identity',
  },
  {
    name: 'a later arrival replaces the identity its create received (Postgres)',
    file: 'src/store/postgres/migrations/017_routes.sql',
    find: '    route := r.route; identity := r.identity;\n',
    replace: '    route := r.route; identity := p_identity;\n',
    tests: ['test/contract/postgres.test.ts'],
    pattern: 'identity',
  },
  {
    name: 'a render that ran past its time (perhaps only paused) parked at once',
    file: 'src/delivery/adapters/common.ts',
    find: "retryable: err.overTime, reason: 'render'",
    replace: "retryable: false, reason: 'render'",
    tests: ['test/integration/ticket-fields.test.ts'],
    pattern: 'past its time',
  },
  {
    name: "a tree's remembered answer keyed without one of the labels it reads",
    file: 'src/delivery/routing.ts',
    find: '  for (const name of tree.names) {',
    replace: '  for (const name of tree.names.slice(1)) {',
    tests: ['test/unit/routing.test.ts'],
  },
];

const only = process.argv.slice(2);
const chosen = FAULTS.filter((f) => only.length === 0 || only.some((o) => f.name.includes(o)));
if (chosen.length === 0) {
  console.error(`no fault matches ${only.join(' ')}`);
  process.exit(1);
}

const build = () => {
  const b = spawnSync('npm', ['run', 'build'], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
  if (b.status !== 0) throw new Error('npm run build failed');
};

let planted = null;
const restore = () => {
  if (planted) writeFileSync(planted.path, planted.text);
  planted = null;
};
process.on('SIGINT', () => {
  restore();
  process.exit(130);
});

const results = [];
let built = false;
try {
  for (const f of chosen) {
    const path = join(root, f.file);
    const text = readFileSync(path, 'utf8');
    const at = text.split(f.find).length - 1;
    if (at !== 1) {
      results.push({ name: f.name, verdict: `stale: its text occurs ${at} times in ${f.file}` });
      continue;
    }
    planted = { path, text };
    writeFileSync(path, text.replace(f.find, f.replace));
    if (f.build) {
      build();
      built = true;
    }
    const started = Date.now();
    const args = ['--import', 'tsx', '--test', '--test-reporter=dot', '--test-timeout=300000'];
    if (f.pattern) args.push(`--test-name-pattern=${f.pattern}`);
    const r = spawnSync(process.execPath, [...args, ...f.tests], {
      cwd: root,
      encoding: 'utf8',
      env: { ...process.env, TEST_SEED: process.env.TEST_SEED ?? '20261203' },
    });
    restore();
    const verdict = r.status === 0 ? 'SURVIVED' : 'caught';
    results.push({ name: f.name, verdict, seconds: Math.round((Date.now() - started) / 1000) });
    console.log(`${verdict.padEnd(8)} ${f.name} (${f.tests.join(' ')}${f.pattern ? `, "${f.pattern}"` : ''})`);
  }
} finally {
  restore();
  // What a build-time fault left in dist/ must not outlive the run.
  if (built) build();
}

const caught = results.filter((r) => r.verdict === 'caught').length;
const bad = results.filter((r) => r.verdict !== 'caught');
console.log(`\nmutation score: ${caught} of ${results.length} planted faults caught`);
for (const r of bad) console.log(`  ${r.verdict}: ${r.name}`);
process.exit(bad.length === 0 ? 0 : 1);
