// needs: alertmanager promtool
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { parseConfig } from '../../src/config/load.js';
import { tempDir } from '../helpers/tmp.js';
// Adapters register their config schemas when their module loads, as the server and the library entry do.
import '../../src/delivery/adapters/index.js';

/**
 * Docs that cannot drift: every YAML block in the README and docs/ is
 * checked by what reads it. onceonly's config is parsed against the schema
 * (so a renamed field or a wrong default in a doc fails here); an
 * Alertmanager config goes through `amtool check-config` (a route naming a
 * receiver nobody defined fails); Prometheus rules through `promtool check rules`.
 */
const root = new URL('../../', import.meta.url).pathname;
const pages = [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
  ...readdirSync(join(root, 'docs/adr')).map((f) => `docs/adr/${f}`),
];

interface Block {
  where: string;
  text: string;
  top: string[];
}

const blocks: Block[] = pages.flatMap((page) => {
  const doc = readFileSync(join(root, page), 'utf8');
  return [...doc.matchAll(/^[ \t]*```ya?ml[^\n]*\n([\s\S]*?)^[ \t]*```/gm)].map((m) => {
    const lines = m[1]!.split('\n');
    // A block indented under a list item: take the indentation off.
    const indent = Math.min(...lines.filter((l) => l.trim()).map((l) => /^ */.exec(l)![0].length));
    const text = lines.map((l) => l.slice(indent)).join('\n');
    const parsed: unknown = parse(text);
    return { where: `${page}:${doc.slice(0, m.index).split('\n').length + 1}`, text, top: parsed && typeof parsed === 'object' ? Object.keys(parsed) : [] };
  });
});

const isAlertmanager = (b: Block) => b.top.includes('receivers');
const isPromRules = (b: Block) => b.top.includes('groups');
/** amtool's HTTP client file (how amtool sends a tenant's token): a file of another tool, with nothing of onceonly's in it. */
const isAmtoolHttp = (b: Block) => /^# amtool /.test(b.text);
const isOnceonly = (b: Block) => !isAlertmanager(b) && !isPromRules(b) && !isAmtoolHttp(b);

test('every onceonly config example in the README and docs/ is valid config', () => {
  const ours = blocks.filter(isOnceonly);
  assert.ok(ours.length >= 25, `found ${ours.length} config examples`);
  const bad: string[] = [];
  for (const b of ours) {
    // Secret references name variables and files of the reader's machine; their syntax has tests of its own.
    // One placeholder per reference, so two tenants' tokens read from two variables stay two tokens.
    const text = b.text.replace(/\$\{(env|file):([^}]*)\}/g, (_, _kind, name: string) => `a-placeholder-for-${name.replace(/[^A-Za-z0-9]/g, '-')}`);
    try {
      parseConfig(text, b.where);
    } catch (err) {
      bad.push(`${b.where}: ${(err as Error).message.split('\n')[0]}`);
    }
  }
  assert.deepEqual(bad, []);
});

test('every Alertmanager config in the docs passes amtool check-config, and every rule file promtool check rules', () => {
  const dir = tempDir();
  try {
    const am = blocks.filter(isAlertmanager);
    const rules = blocks.filter(isPromRules);
    assert.ok(am.length >= 2 && rules.length >= 1, `found ${am.length} Alertmanager configs and ${rules.length} rule files`);
    const bad: string[] = [];
    for (const [i, b] of [...am, ...rules].entries()) {
      const file = join(dir.path, `block-${i}.yml`);
      writeFileSync(file, b.text);
      const r = isAlertmanager(b)
        ? spawnSync('amtool', ['check-config', file], { encoding: 'utf8' })
        : spawnSync('promtool', ['check', 'rules', file], { encoding: 'utf8' });
      if (r.status !== 0) bad.push(`${b.where}: ${r.error?.message ?? `${r.stdout}${r.stderr}`.trim().split('\n').slice(-2).join(' | ')}`);
    }
    assert.deepEqual(bad, []);
  } finally {
    dir.remove();
  }
});
