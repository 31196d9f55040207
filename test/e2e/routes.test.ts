/**
 * Config `route:` and `onceonly routes test`: a bad tree is refused with the
 * path of its node, at load and on a server's reload (keeping the config in
 * force), and bad labels exit 2 with one line.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, parseConfig } from '../../src/config/load.js';
import { compileRoute, ROUTE_MAX_DEPTH } from '../../src/config/route.js';
import { routeReceivers } from '../../src/core/route.js';
import '../../src/delivery/adapters/index.js';
import { runCli, spawnServer } from '../helpers/process.js';
import { tempDir } from '../helpers/tmp.js';

const ADAPTERS = 'adapters:\n  - { name: noc, type: webhook, url: "http://127.0.0.1:9/a" }\n  - { name: pager, type: webhook, url: "http://127.0.0.1:9/b" }\n';
const TREE = `${ADAPTERS}route:\n  receiver: noc\n  routes:\n    - { receiver: pager, matchers: ['severity="CRITICAL"'], continue: true }\n    - { matchers: ['region=~"eu-.*"'] }\n`;

test('a tree routes as written: continue, a node without a receiver inheriting its parent, the root taking the rest', () => {
  const root = compileRoute(parseConfig(TREE, 't.yaml').route!);
  assert.deepEqual(routeReceivers(root, { severity: 'CRITICAL', region: 'eu-west' }), ['pager', 'noc']);
  assert.deepEqual(routeReceivers(root, { severity: 'MAJOR', region: 'eu-west' }), ['noc']);
  assert.deepEqual(routeReceivers(root, { severity: 'CRITICAL' }), ['pager']);
  assert.deepEqual(routeReceivers(root, {}), ['noc']);
});

test('a bad tree is refused naming the node: an unknown adapter, a root without receiver or with matchers, a bad matcher, too deep', () => {
  const deep = (n: number): string => (n === 0 ? '{ receiver: noc }' : `{ matchers: ['a="1"'], routes: [ ${deep(n - 1)} ] }`);
  const cases: Array<[string, RegExp]> = [
    [`${ADAPTERS}route: { receiver: noc, routes: [ { receiver: jira } ] }`, /route\.routes\.0\.receiver: no adapter named "jira" is configured/],
    [`${ADAPTERS}route: { routes: [ { receiver: noc } ] }`, /route\.receiver: the root route must name a receiver/],
    [`${ADAPTERS}route: { receiver: noc, matchers: ['a="1"'] }`, /route\.matchers: the root route matches everything/],
    [`${ADAPTERS}route: { receiver: noc, routes: [ { matchers: ['team'] } ] }`, /route\.routes\.0\.matchers\.0: matcher "team" has no operator/],
    [`${ADAPTERS}route: { receiver: noc, routes: [ { matchers: ['a=~"("'] } ] }`, /route\.routes\.0\.matchers\.0/],
    [`${ADAPTERS}route: { receiver: noc, routes: [ ${deep(ROUTE_MAX_DEPTH + 1)} ] }`, new RegExp(`routes nest at most ${ROUTE_MAX_DEPTH} deep`)],
    [`${ADAPTERS}route: { receiver: noc, group_pause: 5m }`, /route\.group_pause: unknown field/],
  ];
  for (const [text, want] of cases) {
    assert.throws(
      () => parseConfig(text, 'r.yaml'),
      (err: Error) => err instanceof ConfigError && want.test(err.message),
      text,
    );
  }
});

test('onceonly routes test prints the adapters; without a tree every adapter; bad labels and configs exit 2 with one line', () => {
  const dir = tempDir();
  try {
    const cfg = join(dir.path, 'r.yaml');
    writeFileSync(cfg, TREE);
    const ok = runCli(['routes', 'test', '--config', cfg, 'severity=CRITICAL', 'region="eu-west"']);
    assert.deepEqual([ok.status, ok.stdout, ok.stderr], [0, 'pager,noc\n', '']);
    const plain = join(dir.path, 'plain.yaml');
    writeFileSync(plain, ADAPTERS);
    assert.equal(runCli(['routes', 'test', '--config', plain, 'a=b']).stdout, 'noc,pager\n');
    const tenant = join(dir.path, 'tenant.yaml');
    writeFileSync(tenant, `${ADAPTERS}route: { receiver: noc, routes: [ { receiver: pager, matchers: ['tenant="acme"'] } ] }\n`);
    assert.equal(runCli(['routes', 'test', '--config', tenant, '--tenant', 'acme']).stdout, 'pager\n');
    assert.equal(runCli(['routes', 'test', '--config', tenant]).stdout, 'noc\n', 'the tenant label is "default" unless given');
    for (const args of [['bad-name=1'], ['novalue'], ['a="unclosed']]) {
      const r = runCli(['routes', 'test', '--config', cfg, ...args]);
      assert.deepEqual([r.status, r.stdout], [2, ''], args.join(' '));
      assert.match(r.stderr, /^onceonly routes test: label .*\n$/, args.join(' '));
    }
    const escalating = join(dir.path, 'escalating.yaml');
    writeFileSync(
      escalating,
      `${ADAPTERS}route: { receiver: noc, routes: [ { receiver: noc, matchers: ['severity="CRITICAL"'], escalate: [ { after: 15m, to: [pager] }, { after: 1h30m, to: [pager, noc] } ] } ] }\n`,
    );
    assert.equal(
      runCli(['routes', 'test', '--config', escalating, 'severity=CRITICAL']).stdout,
      'noc\nescalates unless acknowledged: after 15m to pager, then after 1h30m to pager,noc\n',
    );
    assert.equal(runCli(['routes', 'test', '--config', escalating, 'severity=MINOR']).stdout, 'noc\n', 'a route without escalation: one line, as amtool');
    const bad = join(dir.path, 'bad.yaml');
    writeFileSync(bad, `${ADAPTERS}route: { receiver: jira }\n`);
    const r = runCli(['routes', 'test', '--config', bad, 'a=b']);
    assert.equal(r.status, 2);
    assert.match(r.stderr, /^onceonly routes test: .*route\.receiver: no adapter named "jira" is configured\n$/);
  } finally {
    dir.remove();
  }
});

test('a server serves a tree; a reload to a tree naming no configured adapter is refused, and the config in force is kept', async () => {
  const dir = tempDir();
  try {
    const cfg = join(dir.path, 'c.yaml');
    writeFileSync(cfg, `${TREE}incidents: { ttl_seconds: 30 }\n`);
    const s = await spawnServer(['--port', '0', '--store', 'memory:', '--config', cfg]);
    try {
      writeFileSync(cfg, `${ADAPTERS}route: { receiver: jira }\nincidents: { ttl_seconds: 90 }\n`);
      // Sent as soon as the server listens: the handler is there from before it starts (serve.ts).
      s.proc.kill('SIGHUP');
      const deadline = Date.now() + 30_000;
      while (!s.lines.some((l) => /config reload refused/.test(l)) && Date.now() < deadline) await new Promise((res) => setTimeout(res, 50));
      assert.ok(
        s.lines.some((l) => /config reload refused/.test(l) && /route\.receiver: no adapter named \\?"jira\\?" is configured/.test(l)),
        s.lines.join('\n'),
      );
      const d = await fetch(`${s.url}/v1/routes/test`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ labels: { severity: 'CRITICAL', region: 'eu-west' } }),
      });
      assert.deepEqual(((await d.json()) as { adapters: string[] }).adapters, ['pager', 'noc'], 'the tree in force is the old one');
      const created = await fetch(`${s.url}/v1/incidents`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ element_id: 'r1', fault_class: 'LOS', root_cause_id: 'c', severity: 'MAJOR' }),
      });
      const key = ((await created.json()) as { dedup_key: string }).dedup_key;
      const rec = (await (await fetch(`${s.url}/v1/incidents/${key}`)).json()) as { created_at: string; expires_at: string };
      assert.equal(Date.parse(rec.expires_at) - Date.parse(rec.created_at), 30_000, 'the TTL in force is the old config’s');
    } finally {
      await s.stop();
    }
  } finally {
    dir.remove();
  }
});

test('a routing tree whose regexes cost more than the silences may is refused at load, per matcher and in all, quickly', () => {
  // `.{0,1000}` compiles to about 2,000 instructions: one is fine, twenty are over the tree's budget.
  const costly = (n: number) =>
    `${ADAPTERS}route:\n  receiver: noc\n  routes:\n${Array.from({ length: n }, (_, i) => `    - { receiver: pager, matchers: ['a${i}=~".{0,1000}x"'] }`).join('\n')}\n`;
  assert.ok(parseConfig(costly(1), 'one.yaml').route, 'one costly matcher is within the budget');
  assert.throws(
    () => parseConfig(costly(20), 'twenty.yaml'),
    (err: Error) => err instanceof ConfigError && /route: the tree's regexes would compile to about \d+ instructions in all; at most 20000/.test(err.message),
  );
  assert.throws(
    () => parseConfig(`${ADAPTERS}route: { receiver: noc, routes: [ { receiver: pager, matchers: ['a=~".{0,1000}.{0,1000}"'] } ] }\n`, 'nested.yaml'),
    (err: Error) => err instanceof ConfigError && /route\.routes\.0\.matchers\.0: the regex would compile to about \d+ instructions/.test(err.message),
  );
  // A pathological pattern is judged before it is compiled: refused at once, not after seconds of compiling.
  assert.throws(
    () =>
      parseConfig(
        `${ADAPTERS}route: { receiver: noc, routes: [ { receiver: pager, matchers: ['a=~"((((.{0,1000}){0,1000}){0,1000}){0,1000})"'] } ] }\n`,
        'huge.yaml',
      ),
    (err: Error) => err instanceof ConfigError && /instructions/.test(err.message),
  );
});
