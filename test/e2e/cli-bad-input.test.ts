import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { once } from 'node:events';
import { join } from 'node:path';
import { runCli, spawnServer } from '../helpers/process.js';
import { tempDir } from '../helpers/tmp.js';

/** One clear line on stderr, exit 2, nothing of a stack trace. */
function refused(r: { status: number | null; stdout: string; stderr: string }, why: RegExp, what: string) {
  assert.equal(r.status, 2, `${what}: exit ${r.status}, stderr ${r.stderr}`);
  assert.match(r.stderr, why, what);
  assert.doesNotMatch(r.stderr, /^\s+at |node:internal|file:\/\/|\^$/m, `${what}: a stack trace reached the user:\n${r.stderr}`);
  assert.ok(r.stderr.trim().split('\n').length <= 2, `${what}: one line (and a suggestion at most):\n${r.stderr}`);
}

// Every bad input a person types answers one line and exit 2, in bounded time (runCli gives up after 20 s,
// which fails the test: a hang is a defect too).
test('the CLI refuses bad input with one line and exit 2: ports, paths, URLs, commands', async () => {
  const dir = tempDir();
  const taken = createServer().listen(0, '127.0.0.1');
  await once(taken, 'listening');
  const busy = (taken.address() as { port: number }).port;
  try {
    for (const port of ['abc', '-1', '99999', '8080x', ''])
      refused(runCli(['serve', '--port', port, '--store', 'memory:']), /port must be a whole number from 0 to 65535 \(--port or PORT\)/, `--port ${port}`);
    refused(
      runCli(['serve', '--store', 'memory:'], undefined, { PORT: 'abc' }),
      /port must be a whole number from 0 to 65535 \(--port or PORT\), got "abc"/,
      'PORT=abc',
    );
    refused(runCli(['serve', '--port', String(busy), '--store', 'memory:']), new RegExp(`port ${busy} on 127\\.0\\.0\\.1 is in use`), 'a port in use');
    // Node's own recursive mkdir spins forever under /proc: this must fail, not hang.
    refused(
      runCli(['serve', '--port', '0', '--store', 'sqlite:/proc/nope/x.db']),
      /cannot open the store "sqlite:\/proc\/nope\/x\.db": ENOENT/,
      'a folder no one can make',
    );
    const notDb = join(dir.path, 'not-a-db.txt');
    writeFileSync(notDb, 'hello, this is text\n'.repeat(100));
    refused(
      runCli(['serve', '--port', '0', '--store', `sqlite:${notDb}`]),
      /cannot open the store .*not-a-db\.txt.*: file is not a database/,
      'a file that is no database',
    );
    refused(runCli(['incident', 'list']), /unknown command 'incident'/, 'a mistyped command');
    refused(runCli(['serve', '--bogus']), /unknown option '--bogus'/, 'an unknown option');
    for (const cmd of [
      ['stats', '--url', 'not-a-url'],
      ['incidents', 'list', '--url', 'ftp://127.0.0.1'],
    ])
      refused(runCli(cmd), /--url \(or ONCEONLY_URL\) must be an http:\/\/ or https:\/\/ URL/, cmd.join(' '));
    refused(runCli(['stats'], undefined, { ONCEONLY_URL: 'nope' }), /must be an http:\/\/ or https:\/\/ URL, .*got "nope"/, 'ONCEONLY_URL=nope');
    const file = join(dir.path, 'events.ndjson');
    writeFileSync(file, '{}\n');
    refused(runCli(['replay', file], undefined, { ONCEONLY_URL: '' }), /give the server with --url or ONCEONLY_URL/, 'replay without a server');
    refused(runCli(['replay', file, '--url', 'not-a-url']), /must be an http:\/\/ or https:\/\/ URL/, 'replay --url not-a-url');
    // A bare `onceonly` lists the commands instead of starting a server.
    const bare = runCli([]);
    assert.equal(bare.status, 0);
    assert.match(bare.stdout, /Usage: onceonly/);
    assert.match(bare.stdout, /serve/);
  } finally {
    taken.close();
    dir.remove();
  }
});

// A recorded, ordered stream of many devices replayed with many requests in flight keeps each device's
// order: no stale_sequence, no gap, every event applied. Sent line by line side by side, the same file used
// to read as hundreds of stale sequences and false gaps.
test('replay keeps each device in order while sending to many devices at once; ONCEONLY_URL names the server', async () => {
  const dir = tempDir();
  const s = await spawnServer(['--port', '0', '--store', 'memory:']);
  try {
    const lines: string[] = [];
    // Device by device, as a producer that drains one terminal's buffer after another writes it: a device's
    // events stand next to each other, so any number in flight at once would overlap them.
    for (let d = 0; d < 40; d++)
      for (let i = 1; i <= 30; i++)
        lines.push(
          JSON.stringify({
            tenant_id: 'acme',
            device_id: `pos-${d}`,
            boot_id: 'b1',
            sequence: i,
            state: i % 2 ? 'IDLE' : 'BUSY',
            observed_at: '2026-12-01T00:00:00Z',
          }),
        );
    const file = join(dir.path, 'ordered.ndjson');
    writeFileSync(file, `${lines.join('\n')}\n`);
    const r = runCli(['replay', file, '--concurrency', '16', '--json'], undefined, { ONCEONLY_URL: s.url });
    assert.equal(r.status, 0, r.stderr);
    const report = JSON.parse(r.stdout);
    assert.deepEqual(
      [report.received, report.applied, report.duplicate, report.rejected, report.sequence_gaps, report.invariant_holds],
      [1200, 1200, 0, {}, 0, true],
      'every event applied in order: no stale sequence, no gap',
    );
    assert.equal(report.notifications, 40 * 29, 'each device changed state at every event after its first');
  } finally {
    await s.stop();
    dir.remove();
  }
});
