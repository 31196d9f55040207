import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startSink } from '../fakes/http-fake.js';
import { postJson, runCli, spawnServer } from '../helpers/process.js';
import { tempDir } from '../helpers/tmp.js';
import { until } from '../helpers/wait.js';

/**
 * "Why no ticket for olt-7?" answered by one command against a running
 * server: `onceonly explain KEY` prints the key's timeline and one last line
 * that answers (a ticket and where, a silence with its comment and author,
 * never arrived); `--json` prints the raw history. With LOG_LEVEL=debug each
 * decision is one log line; at info none is.
 */
test('onceonly explain: the timeline and its answer, for a delivered, a silenced and an unknown key; debug logs one line a decision', async () => {
  const hook = await startSink(200, {});
  const dir = tempDir();
  const config = join(dir.path, 'c.yaml');
  writeFileSync(config, `adapters: [ { name: hook, type: webhook, url: "${hook.url}/in" } ]\n`);
  const s = await spawnServer(['--port', '0', '--store', 'memory:', '--config', config], { LOG_LEVEL: 'debug' });
  try {
    const inc = (element_id: string) => ({
      element_id,
      fault_class: 'LOS',
      root_cause_id: 'fiber-cut-12',
      severity: 'MAJOR',
      summary: `${element_id} lost signal`,
    });
    const silence = await postJson(`${s.url}/api/v2/silences`, {
      matchers: [{ name: 'element_id', value: 'olt-7', isRegex: false, isEqual: true }],
      startsAt: new Date(Date.now() - 1000).toISOString(),
      endsAt: new Date(Date.now() + 3_600_000).toISOString(),
      createdBy: 'alice',
      comment: 'fiber 12 being spliced',
    });
    const muted = (await postJson(`${s.url}/v1/incidents`, inc('olt-7'))).body.dedup_key as string;
    await postJson(`${s.url}/v1/incidents`, inc('olt-7'));
    const paged = (await postJson(`${s.url}/v1/incidents`, inc('olt-8'))).body.dedup_key as string;
    await until(
      () => hook.requests.length >= 1 || null,
      15_000,
      () => 'the unsilenced create delivered',
    );

    const explainOf = async (key: string, want: RegExp) =>
      until(
        () => {
          const r = runCli(['explain', key, '--url', s.url]);
          return r.status === 0 && want.test(r.stdout.trim().split('\n').at(-1)!) ? r : null;
        },
        15_000,
        () => runCli(['explain', key, '--url', s.url]).stdout,
      );
    const m = await explainOf(muted, /^no ticket: muted by silence/);
    const lines = m.stdout.trim().split('\n');
    assert.match(lines[0]!, /^\d{4}-\d\d-\d\dT\S+Z {2}CREATE \(new\) MAJOR$/, 'the timeline starts with the create');
    assert.ok(
      lines.some((l) => /SUPPRESS ×1 \(unchanged\)/.test(l)),
      m.stdout,
    );
    assert.equal(
      lines.at(-1),
      `no ticket: muted by silence ${silence.body.silenceID} ("fiber 12 being spliced", by alice) until ${new Date(Date.parse(lines.at(-1)!.split(' until ')[1]!)).toISOString()}`,
    );

    const p = await explainOf(paged, /^ticket: /);
    assert.equal(p.stdout.trim().split('\n').at(-1), 'ticket: delivered to hook');
    assert.match(p.stdout, /create delivered to hook \(attempt 1\)/);

    const json = runCli(['explain', paged, '--url', s.url, '--json']);
    const body = JSON.parse(json.stdout) as { key: string; events: Array<{ type: string }> };
    assert.equal(body.key, paged);
    assert.deepEqual(
      body.events.map((e) => e.type),
      ['decision', 'delivery'],
    );

    const never = runCli(['explain', `dedup:${'0'.repeat(32)}`, '--url', s.url]);
    assert.equal(never.status, 0);
    assert.match(never.stdout.trim(), /^never arrived: no decision is recorded for dedup:0{32}/);
    const bad = runCli(['explain', 'not-a-key', '--url', s.url]);
    assert.equal(bad.status, 1);
    assert.match(bad.stderr, /onceonly explain: not-a-key: HTTP 400: invalid key/);

    // One debug line per decision: three decisions, three lines, each with its key, decision, reason, tenant and request id.
    const decided = s.lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.msg === 'decided');
    assert.deepEqual(
      decided.map((l) => [l.key, l.decision, l.reason, l.tenant, typeof l.request_id]),
      [
        [muted, 'CREATE', 'new', 'default', 'string'],
        [muted, 'SUPPRESS', 'unchanged', 'default', 'string'],
        [paged, 'CREATE', 'new', 'default', 'string'],
      ],
    );
  } finally {
    await s.stop();
    await hook.close();
    dir.remove();
  }
  // At info, no line per decision.
  const quiet = await spawnServer(['--port', '0', '--store', 'memory:']);
  try {
    await postJson(`${quiet.url}/v1/incidents`, { element_id: 'x', fault_class: 'LOS', root_cause_id: 'r', severity: 'MAJOR' });
    assert.equal(
      (await postJson(`${quiet.url}/v1/incidents`, { element_id: 'x', fault_class: 'LOS', root_cause_id: 'r', severity: 'MAJOR' })).body.decision,
      'SUPPRESS',
    );
  } finally {
    await quiet.stop();
  }
  assert.equal(quiet.lines.filter((l) => l.includes('"decided"')).length, 0);
});
