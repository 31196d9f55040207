import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, spawnServer } from '../helpers/process.js';
import { tempDir } from '../helpers/tmp.js';

const TOKEN = 'cli-silence-token-0000000001';

test('onceonly silence add, list and expire against a running server with a token; bad input exits 2 and changes nothing', async () => {
  const dir = tempDir();
  const config = join(dir.path, 'c.yaml');
  writeFileSync(config, `tenants:\n  - { id: acme, tokens: ["${TOKEN}"] }\n`);
  const s = await spawnServer(['--port', '0', '--store', `sqlite:${join(dir.path, 'o.db')}`, '--config', config]);
  const cli = (...args: string[]) => runCli(['silence', ...args, '--url', s.url], undefined, { ONCEONLY_TOKEN: TOKEN });
  try {
    const added = cli('add', 'fault_class=LOS', 'severity=~"MAJOR|MINOR"', '--comment', 'fiber work', '--author', 'noc', '--duration', '1h30m');
    assert.equal(added.status, 0, added.stderr);
    const id = added.stdout.trim();
    assert.match(id, /^[0-9a-f-]{36}$/);

    const list = cli('list');
    assert.equal(list.status, 0);
    assert.match(list.stdout, new RegExp(`${id}\\s+fault_class="LOS" severity=~"MAJOR\\|MINOR"\\s+active\\s+\\S+\\s+noc\\s+fiber work`));
    const json = JSON.parse(cli('list', '--json').stdout) as Array<{ id: string; startsAt: string; endsAt: string }>;
    assert.equal(json.length, 1);
    // Ends 1h30m after the CLI's now; the server starts it at its own now, a moment later.
    const span = Date.parse(json[0]!.endsAt) - Date.parse(json[0]!.startsAt);
    assert.ok(span <= 90 * 60_000 && span > 89 * 60_000, `1h30m, less the moment the request took: ${span} ms`);
    assert.equal(cli('list', 'fault_class=LOF').stdout.trim(), 'no silences', 'a filter');

    for (const [args, why] of [
      [['add', 'fault_class=~"("', '--comment', 'x'], /not an RE2 regex/],
      [['add', 'fault_class=LOS', '--comment', 'x', '--duration', '2x'], /not a duration/],
      // Once a stack trace: a number past what a date can hold.
      [['add', 'fault_class=LOS', '--comment', 'x', '--duration', '99999999999999999999w'], /^onceonly silence add: .*at most 100 years/m],
      [['add', 'fault_class=LOS', '--comment', 'x', '--start', 'soon'], /--start/],
      [['add', 'fault_class=~".*"', '--comment', 'x'], /empty string/],
      [['list', 'nope'], /no operator/],
    ] as Array<[string[], RegExp]>) {
      const r = cli(...args);
      assert.notEqual(r.status, 0, args.join(' '));
      assert.match(r.stderr, why, args.join(' '));
    }
    const noComment = cli('add', 'fault_class=LOS');
    assert.notEqual(noComment.status, 0);
    assert.match(noComment.stderr, /--comment/);
    assert.equal((JSON.parse(cli('list', '--json').stdout) as unknown[]).length, 1, 'nothing was added by the refused ones');

    assert.equal(cli('expire', id).stdout.trim(), `expired ${id}`);
    assert.equal(cli('list').stdout.trim(), 'no silences');
    assert.match(cli('list', '--expired').stdout, new RegExp(`${id}.*expired`));
    const unknown = cli('expire', '00000000-0000-4000-8000-000000000000');
    assert.equal(unknown.status, 1);
    assert.match(unknown.stderr, /404/);
    const noToken = runCli(['silence', 'list', '--url', s.url], undefined, { ONCEONLY_TOKEN: '' });
    assert.equal(noToken.status, 1);
    assert.match(noToken.stderr, /401/);
  } finally {
    await s.stop();
    dir.remove();
  }
});
