import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLI, REPO_ROOT, spawnServer } from '../helpers/process.js';
import { tempDir } from '../helpers/tmp.js';

/**
 * docs/routing.md's examples, as written: each `$ onceonly …` or `$ curl …`
 * line in a shell block is run against the last config the page showed
 * before it (a YAML block with `adapters:`), and must print the line after
 * it. Only the documented address is changed, to a server's serving that
 * config; the secrets the configs reference come from the environment.
 */
const ENV = {
  SNOW_PASSWORD: 'a-password',
  PD_ROUTING_KEY: '0123456789abcdef0123456789abcdef',
  ACME_TOKEN: 'acme-token-0123456789',
  GLOBEX_TOKEN: 'globex-token-0123456789',
  ACME_JIRA_TOKEN: 'a-jira-token',
};

interface Case {
  where: string;
  section: string;
  config: string;
  command: string;
  expected: string;
}

function cases(): Case[] {
  const text = readFileSync(join(REPO_ROOT, 'docs/routing.md'), 'utf8');
  const out: Case[] = [];
  let config: string | null = null;
  for (const m of text.matchAll(/```(\w*)\n([\s\S]*?)```/g)) {
    if (m[1] === 'yaml') {
      if (/^adapters:/m.test(m[2]!)) config = m[2]!;
      continue;
    }
    const before = text.slice(0, m.index);
    const section = [...before.matchAll(/^#{2,3} (.*)$/gm)].at(-1)?.[1] ?? '';
    const line0 = before.split('\n').length;
    const lines = m[2]!.split('\n');
    lines.forEach((line, i) => {
      if (!line.startsWith('$ ')) return;
      assert.ok(config, `docs/routing.md:${line0 + i + 1}: an example before any config`);
      out.push({ where: `docs/routing.md:${line0 + i + 1}`, section, config, command: line.slice(2), expected: lines[i + 1] ?? '' });
    });
  }
  return out;
}

test('docs/routing.md holds a tried example for each worked example', () => {
  const sections = new Set(cases().map((c) => c.section));
  for (const s of [
    'Trying a tree',
    'Network alarms of region EU to ServiceNow group "NOC EU"',
    'CRITICAL to PagerDuty too',
    'Tenant acme to its own Jira project',
  ])
    assert.ok(sections.has(s), `no example under "${s}": ${[...sections].join(', ')}`);
});

test("every example in docs/routing.md prints what the page shows, against the page's config", async () => {
  const dir = tempDir();
  const bin = join(dir.path, 'bin');
  mkdirSync(bin);
  writeFileSync(join(bin, 'onceonly'), `#!/bin/sh\nexec "${process.execPath}" "${CLI}" "$@"\n`);
  chmodSync(join(bin, 'onceonly'), 0o755);
  const cfg = join(dir.path, 'onceonly.yml');
  const servers = new Map<string, Awaited<ReturnType<typeof spawnServer>>>();
  try {
    let ran = 0;
    for (const c of cases()) {
      writeFileSync(cfg, c.config);
      let command = c.command;
      if (/localhost:8080/.test(command)) {
        let s = servers.get(c.config);
        if (!s) {
          s = await spawnServer(['--port', '0', '--store', 'memory:', '--config', cfg], ENV);
          servers.set(c.config, s);
        }
        command = command.replace(/localhost:8080/g, new URL(s.url).host);
      }
      const r = spawnSync('bash', ['-c', command], {
        cwd: dir.path,
        encoding: 'utf8',
        timeout: 20_000,
        env: { ...process.env, ...ENV, PATH: `${bin}:${process.env.PATH}` },
      });
      assert.equal(r.status, 0, `${c.where}: \`${command}\` exited ${r.status}\n${r.stderr}`);
      if (c.expected.startsWith('{')) assert.deepEqual(JSON.parse(r.stdout), JSON.parse(c.expected), c.where);
      else assert.equal(r.stdout, `${c.expected}\n`, c.where);
      ran++;
    }
    assert.ok(ran >= 9, `${ran} examples ran`);
  } finally {
    await Promise.all([...servers.values()].map((s) => s.stop()));
    dir.remove();
  }
});
