// needs: alertmanager
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startSink } from '../fakes/http-fake.js';
import { CLI, REPO_ROOT, runCli, spawnServer } from '../helpers/process.js';
import { markdownPages } from '../helpers/files.js';
import { tempDir } from '../helpers/tmp.js';
import { until } from '../helpers/wait.js';

/**
 * Every shell example in README.md and docs/, extracted from the Markdown as
 * written, run against a real server: a reader who pastes one gets what the
 * page says. What is changed before running, and only this:
 *   - the documented address (127.0.0.1:8080, localhost:8080) becomes the
 *     test server's, and ONCEONLY_URL points there for commands that rely on
 *     the default address;
 *   - `<id>` becomes the id the block's earlier `add` printed, and the
 *     example dead-letter id (`3:1764512345678-0.hook`) a real dead letter's;
 *   - `onceonly` is this checkout's CLI;
 *   - the server is configured with the heartbeat docs/noise.md pings.
 * npm commands (the quick start) are what CI itself runs, and are left out.
 */

interface Example {
  where: string;
  command: string;
  /** the `# {…}` answer the page shows right after it, if any */
  shows?: string;
}

const COMMAND = /^\s*(curl|onceonly|amtool|printf)\s/;

function examples(): Example[] {
  const files = markdownPages(REPO_ROOT);
  const out: Example[] = [];
  for (const file of files) {
    const text = readFileSync(join(REPO_ROOT, file), 'utf8');
    for (const m of text.matchAll(/```(\w*)\n([\s\S]*?)```/g)) {
      if (['yaml', 'json', 'js', 'ts', 'yml'].includes(m[1]!)) continue;
      const line0 = text.slice(0, m.index).split('\n').length;
      const lines = m[2]!.split('\n');
      for (let i = 0; i < lines.length; i++) {
        if (!COMMAND.test(lines[i]!)) continue;
        const start = i;
        let command = lines[i]!;
        // A command goes on while a line ends in a continuation or a pipe.
        while (/(\\|\|)\s*$/.test(lines[i]!) && i + 1 < lines.length) command += `\n${lines[++i]!}`;
        const shows = /^#\s*(\{.*\})\s*$/.exec(lines[i + 1] ?? '')?.[1];
        out.push({ where: `${file}:${line0 + start + 1}`, command, ...(shows ? { shows } : {}) });
      }
    }
  }
  return out;
}

test('the Markdown holds the examples this test runs (README, adapters, noise)', () => {
  const found = examples();
  const places = new Set(found.map((e) => e.where.split(':')[0]));
  for (const f of ['README.md', 'docs/adapters.md', 'docs/noise.md']) assert.ok(places.has(f), `examples found in ${f}: ${[...places].join(', ')}`);
  assert.ok(found.length >= 10, `${found.length} examples`);
  assert.ok(
    found.some((e) => e.shows),
    'at least one shows its answer',
  );
});

test('every curl, onceonly and amtool example in the docs runs as written against a server and answers as the page says', async () => {
  // Deliveries go to a receiver that refuses them: the dead-letter examples need dead letters.
  const hook = await startSink(400, { error: 'this receiver takes nothing' });
  const dir = tempDir();
  const config = join(dir.path, 'c.yaml');
  // The heartbeat docs/noise.md configures and pings.
  writeFileSync(
    config,
    `delivery: { max_retries: 0 }\nadapters: [ { name: hook, type: webhook, url: "${hook.url}/in" } ]\nheartbeats: [ { name: nightly-backup, interval_seconds: 86400, grace_seconds: 3600 } ]\n`,
  );
  const s = await spawnServer(['--port', '0', '--store', `sqlite:${join(dir.path, 'o.db')}`, '--config', config]);
  const bin = join(dir.path, 'bin');
  mkdirSync(bin);
  writeFileSync(join(bin, 'onceonly'), `#!/bin/sh\nexec "${process.execPath}" "${CLI}" "$@"\n`);
  chmodSync(join(bin, 'onceonly'), 0o755);
  const host = new URL(s.url).host;
  const deadIds = async () =>
    ((await (await fetch(`${s.url}/v1/dead-letters`)).json()) as { dead_letters: Array<{ id: string }> }).dead_letters.map((d) => d.id);
  try {
    let lastId: string | null = null;
    let ran = 0;
    for (const ex of examples()) {
      let command = ex.command.replace(/(127\.0\.0\.1|localhost):8080/g, host);
      if (/<id>/.test(command)) {
        assert.ok(lastId, `${ex.where}: an <id> with no add before it`);
        command = command.replace(/<id>/g, lastId);
      }
      if (/\d+:\d+-\d+\.hook/.test(command)) {
        // The dead letter the example names: a real one, dead (again) by the time the command runs.
        const id = await until(
          async () => (await deadIds())[0],
          15_000,
          () => 'no dead letter appeared',
        );
        command = command.replace(/\d+:\d+-\d+\.hook/g, id);
      }
      if (/dead-letters (retry|drop)/.test(command))
        await until(
          async () => (await deadIds()).length > 0,
          15_000,
          () => `${ex.where}: nothing dead to act on`,
        );
      const r = spawnSync('bash', ['-c', command], {
        cwd: dir.path,
        encoding: 'utf8',
        timeout: 20_000,
        env: { ...process.env, PATH: `${bin}:${process.env.PATH}`, ONCEONLY_URL: s.url },
      });
      assert.equal(r.status, 0, `${ex.where}: \`${command}\` exited ${r.status}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
      ran++;
      if (/ (silence|silences) add /.test(command)) lastId = /([0-9a-f]{8}-[0-9a-f-]{27,}|[0-9A-Za-z_-]{16,})/.exec(r.stdout)?.[1] ?? null;
      if (ex.shows) {
        const answer = JSON.parse(r.stdout) as Record<string, unknown>;
        const shown = JSON.parse(ex.shows.replace(/…/g, '')) as Record<string, unknown>;
        assert.deepEqual(Object.keys(answer).sort(), Object.keys(shown).sort(), `${ex.where}: the answer has the fields the page shows`);
        for (const [k, v] of Object.entries(shown)) {
          if (typeof v === 'string' && typeof answer[k] === 'string')
            assert.ok((answer[k] as string).startsWith(v), `${ex.where}: ${k} is ${answer[k]}, the page shows ${v}…`);
          else assert.deepEqual(answer[k], v, `${ex.where}: ${k}`);
        }
      }
    }
    assert.ok(ran >= 10, `${ran} examples ran`);
  } finally {
    await s.stop();
    await hook.close();
  }
});

test('the config error the docs show is the one the CLI prints', () => {
  const text = readFileSync(join(REPO_ROOT, 'docs/configuration.md'), 'utf8');
  const shown = /^onceonly: \/etc\/onceonly\.yaml: (invalid config: (\S+): .*)$/m.exec(text);
  assert.ok(shown, 'docs/configuration.md shows a config error');
  const [, message, field] = shown;
  const dir = tempDir();
  const file = join(dir.path, 'onceonly.yaml');
  // The field the example names, given the value that example is about.
  const [section, key] = field!.split('.');
  writeFileSync(file, `${section}:\n  ${key}: 0\n`);
  const r = runCli(['serve', '--port', '0', '--config', file]);
  assert.equal(r.status, 2);
  assert.equal(r.stderr.trim(), `onceonly: ${file}: ${message}`);
  dir.remove();
});
