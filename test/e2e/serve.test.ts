import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { tempDir } from '../helpers/tmp.js';
import { postJson, runCli, spawnServer } from '../helpers/process.js';

const incident = (i = 0, severity = 'MAJOR') => ({
  element_id: `olt-${i}`,
  fault_class: 'LOS',
  root_cause_id: 'fiber-cut-9',
  severity,
});

describe('onceonly serve (real processes, real SQLite file)', () => {
  test('the first log lines name what runs, then the port; 200 concurrent identical POSTs make one CREATE; SIGTERM exits 0', async () => {
    const dir = tempDir();
    const s = await spawnServer(['--port', '0', '--store', `sqlite:${join(dir.path, 'o.db')}`]);
    try {
      assert.match(s.lines[0]!, /"store":"sqlite:[^"]*o\.db".*"msg":"onceonly \d+\.\d+\.\d+ starting"/);
      assert.match(s.lines[1]!, /listening on http:\/\/127\.0\.0\.1:\d+/);
      const answers = await Promise.all(Array.from({ length: 200 }, () => postJson(`${s.url}/v1/incidents`, incident())));
      assert.ok(answers.every((a) => a.status === 200));
      const creates = answers.filter((a) => a.body.decision === 'CREATE');
      assert.equal(creates.length, 1);
      assert.equal(answers.filter((a) => a.body.decision === 'SUPPRESS').length, 199);
      const metrics = await (await fetch(`${s.url}/metrics`)).text();
      // With the default 1 s race window, copies racing the claim are reported as lost races.
      const lost = Number(/decision="SUPPRESS",reason="lost_race"\} (\d+)/.exec(metrics)?.[1]);
      const unchanged = Number(/decision="SUPPRESS",reason="unchanged"\} (\d+)/.exec(metrics)?.[1]);
      assert.equal(lost + unchanged, 199);
      assert.ok(lost > 0);
      assert.equal(await s.stop('SIGTERM'), 0);
    } finally {
      await s.stop('SIGKILL');
      dir.remove();
    }
  });

  test('a quick sequential repeat is SUPPRESS/unchanged, not lost_race: nothing raced it', async () => {
    const dir = tempDir();
    const s = await spawnServer(['--port', '0', '--store', `sqlite:${join(dir.path, 'o.db')}`]);
    try {
      assert.equal((await postJson(`${s.url}/v1/incidents`, incident(7))).body.decision, 'CREATE');
      // Each repeat is sent once the previous answer is back, well inside the 1 s race window.
      for (let i = 0; i < 20; i++) {
        const r = await postJson(`${s.url}/v1/incidents`, incident(7));
        assert.deepEqual([r.body.decision, r.body.reason], ['SUPPRESS', 'unchanged'], `repeat ${i + 1}`);
      }
      const metrics = await (await fetch(`${s.url}/metrics`)).text();
      assert.match(metrics, /decision="SUPPRESS",reason="lost_race"\} 0$/m);
    } finally {
      await s.stop('SIGKILL');
      dir.remove();
    }
  });

  test('two processes sharing one SQLite file: 100 keys × 10 copies → 100 CREATEs; 200 identical → 1 CREATE', async () => {
    const dir = tempDir();
    const store = `sqlite:${join(dir.path, 'shared.db')}`;
    const a = await spawnServer(['--port', '0', '--store', store]);
    const b = await spawnServer(['--port', '0', '--store', store]);
    try {
      const jobs = [];
      for (let copy = 0; copy < 10; copy++) {
        for (let k = 0; k < 100; k++) jobs.push(postJson(`${(copy + k) % 2 ? a.url : b.url}/v1/incidents`, incident(k)));
      }
      const answers = await Promise.all(jobs);
      assert.ok(
        answers.every((x) => x.status === 200),
        JSON.stringify(answers.find((x) => x.status !== 200)),
      );
      assert.equal(answers.filter((x) => x.body.decision === 'CREATE').length, 100);
      assert.equal(new Set(answers.filter((x) => x.body.decision === 'CREATE').map((x) => x.body.dedup_key)).size, 100);
      // 200 concurrent identical POSTs split across both → exactly one CREATE.
      const same = await Promise.all(Array.from({ length: 200 }, (_, i) => postJson(`${i % 2 ? a.url : b.url}/v1/incidents`, incident(999))));
      assert.equal(same.filter((x) => x.body.decision === 'CREATE').length, 1);
      assert.equal(same.filter((x) => x.body.decision === 'SUPPRESS').length, 199);
      // A severity change sent 20 times at once across both → exactly one UPDATE.
      const upd = await Promise.all(Array.from({ length: 20 }, (_, i) => postJson(`${i % 2 ? a.url : b.url}/v1/incidents`, incident(0, 'CRITICAL'))));
      assert.equal(upd.filter((x) => x.body.decision === 'UPDATE').length, 1);
      assert.equal(await a.stop(), 0);
      assert.equal(await b.stop(), 0);
    } finally {
      await a.stop('SIGKILL');
      await b.stop('SIGKILL');
      dir.remove();
    }
  });

  test('a bad config file stops start-up with the field named', async () => {
    const dir = tempDir();
    try {
      const cfg = join(dir.path, 'bad.yaml');
      writeFileSync(cfg, 'incidents:\n  ttl_seconds: -5\n');
      const r = runCli(['serve', '--port', '0', '--store', 'memory:', '--config', cfg]);
      assert.equal(r.status, 2);
      assert.match(r.stderr, /incidents\.ttl_seconds/);
      writeFileSync(cfg, 'incidents:\n  ttl: 5\n');
      const r2 = runCli(['serve', '--port', '0', '--store', 'memory:', '--config', cfg]);
      assert.equal(r2.status, 2);
      assert.match(r2.stderr, /incidents\.ttl: unknown field/);
      const r3 = runCli(['serve', '--port', '0', '--store', 'memory:', '--config', join(dir.path, 'missing.yaml')]);
      assert.equal(r3.status, 2);
      assert.match(r3.stderr, /cannot read config file: ENOENT/);
    } finally {
      dir.remove();
    }
  });

  test('SIGHUP reloads the config; a bad new file is refused and the old one kept', async () => {
    const dir = tempDir();
    const cfg = join(dir.path, 'onceonly.json');
    writeFileSync(cfg, JSON.stringify({ incidents: { ttl_seconds: 600 } }));
    const s = await spawnServer(['--port', '0', '--store', 'memory:', '--config', cfg]);
    const ttlOf = async (i: number) => {
      const r = await postJson(`${s.url}/v1/incidents`, incident(i));
      const v = (await (await fetch(`${s.url}/v1/incidents/${r.body.dedup_key}`)).json()) as { expires_at: string; last_seen_at: string };
      return (Date.parse(v.expires_at) - Date.parse(v.last_seen_at)) / 1000;
    };
    const waitForLog = async (re: RegExp) => {
      for (let i = 0; i < 100 && !s.lines.some((l) => re.test(l)); i++) await new Promise((r) => setTimeout(r, 50));
      assert.ok(
        s.lines.some((l) => re.test(l)),
        `log line ${re} expected in:\n${s.lines.join('\n')}`,
      );
    };
    try {
      assert.equal(await ttlOf(1), 600);
      writeFileSync(cfg, JSON.stringify({ incidents: { ttl_seconds: 30 } }));
      s.proc.kill('SIGHUP');
      await waitForLog(/config reloaded/);
      assert.equal(await ttlOf(2), 30);
      writeFileSync(cfg, '{"incidents": {"ttl_seconds": "soon"}}');
      s.proc.kill('SIGHUP');
      await waitForLog(/config reload refused.*incidents\.ttl_seconds|incidents\.ttl_seconds.*config reload refused/);
      assert.equal(await ttlOf(3), 30);
    } finally {
      await s.stop('SIGKILL');
      dir.remove();
    }
  });

  test('refuses a non-loopback bind without tenants, and a bad port', () => {
    const r = runCli(['serve', '--host', '0.0.0.0', '--port', '0', '--store', 'memory:']);
    assert.equal(r.status, 2);
    assert.match(r.stderr, /refusing to bind 0\.0\.0\.0.*no tenants/);
    const p = runCli(['serve', '--port', 'eighty', '--store', 'memory:']);
    assert.equal(p.status, 2);
    assert.match(p.stderr, /port must be a whole number/);
    const st = runCli(['serve', '--port', '0', '--store', 'mongodb://x']);
    assert.equal(st.status, 2);
    assert.match(st.stderr, /not recognised/);
  });

  test('environment variables configure serve', async () => {
    const s = await spawnServer([], { PORT: '0', ONCEONLY_STORE: 'memory:' });
    try {
      assert.deepEqual(await (await fetch(`${s.url}/readyz`)).json(), { status: 'ready', store: 'memory' });
    } finally {
      await s.stop();
    }
  });
});

describe('onceonly key', () => {
  test('prints the dedup_key of an incident read on stdin', () => {
    // printf '%s' 'a|b\|c|d' | sha256sum
    const r = runCli(['key'], JSON.stringify({ element_id: 'a', fault_class: 'b|c', root_cause_id: 'd', severity: 'MAJOR' }));
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, 'dedup:ef0c88f19f3a8c0ba49ca3577dc1e715\n');
  });

  test('refuses bad input with a clear message', () => {
    const notJson = runCli(['key'], '{"element_id":');
    assert.equal(notJson.status, 2);
    assert.match(notJson.stderr, /not valid JSON/);
    const missing = runCli(['key'], JSON.stringify({ element_id: 'a', fault_class: 'b' }));
    assert.equal(missing.status, 2);
    assert.match(missing.stderr, /root_cause_id/);
    assert.equal(missing.stdout, '');
    // What POST /v1/incidents refuses, `key` refuses too: no key is printed for a body the server would not take.
    const base = { element_id: 'a', fault_class: 'b', root_cause_id: 'd', severity: 'MAJOR' };
    for (const [bad, field] of [
      [{ ...base, severity: 'LOUD' }, /severity/],
      [{ ...base, colour: 'red' }, /colour/],
      [{ element_id: 'a', fault_class: 'b', root_cause_id: 'd' }, /severity/],
      [{ ...base, element_id: 'a\u0000b' }, /element_id/],
    ] as const) {
      const r = runCli(['key'], JSON.stringify(bad));
      assert.deepEqual([r.status, r.stdout], [2, ''], JSON.stringify(bad));
      assert.match(r.stderr, field, JSON.stringify(bad));
    }
  });
});

test('with tenants configured it binds a public address, and a reload that drops the tenants is refused', async () => {
  const dir = tempDir();
  const cfg = join(dir.path, 'c.yaml');
  writeFileSync(cfg, 'tenants: [ { id: acme, tokens: [a-long-random-token-1] } ]\n');
  const s = await spawnServer(['--host', '0.0.0.0', '--port', '0', '--store', 'memory:', '--config', cfg]);
  try {
    const url = s.url.replace('0.0.0.0', '127.0.0.1');
    const anon = await fetch(`${url}/v1/stats`);
    assert.equal(anon.status, 401);
    const ok = await fetch(`${url}/v1/stats`, { headers: { authorization: 'Bearer a-long-random-token-1' } });
    assert.equal(ok.status, 200);
    writeFileSync(cfg, 'incidents: { ttl_seconds: 60 }\n');
    s.proc.kill('SIGHUP');
    const deadline = Date.now() + 5000;
    while (!s.lines.some((l) => /config reload refused/.test(l)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    assert.ok(
      s.lines.some((l) => /refusing to bind 0\.0\.0\.0.*config reload refused/.test(l)),
      s.lines.join('\n'),
    );
    assert.equal((await fetch(`${url}/v1/stats`)).status, 401, 'still authenticated');
    await fetch(`${url}/v1/stats`, { headers: { authorization: 'Bearer a-wrong-token-someone-tried' } });
    const logs = s.lines.join('\n') + s.stderr();
    assert.ok(!logs.includes('a-long-random-token-1') && !logs.includes('a-wrong-token-someone-tried'), 'tokens are never logged');
  } finally {
    await s.stop();
    dir.remove();
  }
});
