import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { configSchema } from '../../src/config/schema.js';
import { REPO_ROOT, runCli } from '../helpers/process.js';
import { markdownPages } from '../helpers/files.js';
import { tempDir } from '../helpers/tmp.js';

/** `onceonly check-config FILE`: every problem of a file, as serve would load it, and nothing started. */
test('a valid file: exit 0 and one line saying what it configures', () => {
  const dir = tempDir();
  try {
    const file = join(dir.path, 'ok.yml');
    writeFileSync(
      file,
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a secret reference, as a config file holds it
      'adapters: [ { name: hook, type: webhook, url: "http://127.0.0.1:9/in" } ]\ntenants: [ { id: acme, tokens: ["${env:OO_CHECK_TOKEN}"] } ]\n',
    );
    const r = runCli(['check-config', file], undefined, { OO_CHECK_TOKEN: 'acme-token-0123456789abcdef' });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, `${file}: valid (1 adapter, 1 tenant, no routing tree, no broker ingest)\n`);
    assert.equal(r.stderr, '');
  } finally {
    dir.remove();
  }
});

test('a bad file: every problem on its own line, secrets never shown, exit 2', () => {
  const dir = tempDir();
  try {
    const file = join(dir.path, 'bad.yml');
    writeFileSync(
      file,
      [
        'incidents: { ttl_seconds: 0 }',
        // biome-ignore lint/suspicious/noTemplateCurlyInString: a secret reference, as a config file holds it
        'tenants: [ { id: acme, tokens: ["${env:OO_CHECK_UNSET}"] } ]',
        // biome-ignore lint/suspicious/noTemplateCurlyInString: a secret reference, as a config file holds it
        'adapters: [ { name: hook, type: webhook, url: "http://127.0.0.1:9/${env:OO_CHECK_SECRET}", timeout_ms: -1 } ]',
        'bogus: 1',
        '',
      ].join('\n'),
    );
    const r = runCli(['check-config', file], undefined, { OO_CHECK_SECRET: 'sekrit-value-42' });
    assert.equal(r.status, 2);
    assert.equal(r.stdout, '');
    const lines = r.stderr.trimEnd().split('\n');
    assert.equal(lines[0], `${file}: 3 problems`);
    const problems = lines.slice(1, 4).map((l) => l.trim());
    // The schema's problems, each naming its field; the variable this shell does not set is a warning, not one of them.
    assert.match(lines[4]!.trim(), /^warning: tenants\.0\.tokens\.0: environment variable OO_CHECK_UNSET is not set here/);
    assert.ok(
      problems.some((p) => p.startsWith('incidents.ttl_seconds: ')),
      r.stderr,
    );
    assert.ok(
      problems.some((p) => p.startsWith('adapters.0.timeout_ms: ')),
      r.stderr,
    );
    assert.ok(
      problems.some((p) => p.startsWith('bogus: ')),
      r.stderr,
    );
    assert.ok(!r.stderr.includes('sekrit-value-42'), 'a secret read for the file is never printed');
  } finally {
    dir.remove();
  }
});

test('an environment variable this shell does not set is a warning: the file is valid, and its ingest is summed up', () => {
  const dir = tempDir();
  try {
    const file = join(dir.path, 'replica.yml');
    writeFileSync(
      file,
      [
        // biome-ignore lint/suspicious/noTemplateCurlyInString: a reference, as a config file holds it
        'failopen: { journal_path: "./data/journal-${env:OO_CHECK_PORT}.db" }',
        // biome-ignore lint/suspicious/noTemplateCurlyInString: a reference, as a config file holds it
        'adapters: [ { name: hook, type: webhook, url: "${env:OO_CHECK_URL}" } ]',
        'ingest:',
        '  nats: { url: "nats://127.0.0.1:4222", stream: ALERTS, subjects: { "alerts.incidents.>": incident, "alerts.am.>": alertmanager } }',
        '  mqtt: { url: "mqtt://127.0.0.1:1883", topics: { "devices/+/status": event } }',
        '',
      ].join('\n'),
    );
    const r = runCli(['check-config', file]);
    assert.equal(r.status, 0, r.stderr);
    const lines = r.stdout.trimEnd().split('\n');
    // The URL from the environment cannot be checked with a placeholder: valid, said with warnings, no summary.
    assert.equal(lines[0], `${file}: valid, 2 warnings`);
    assert.match(lines[1]!, /^ {2}warning: failopen\.journal_path: environment variable OO_CHECK_PORT is not set here/);
    assert.match(lines[2]!, /^ {2}warning: adapters\.0\.url: environment variable OO_CHECK_URL is not set here/);
    const set = runCli(['check-config', file], undefined, { OO_CHECK_URL: 'http://127.0.0.1:9/hook' });
    assert.equal(set.status, 0, set.stderr);
    assert.equal(
      set.stdout.split('\n')[0],
      `${file}: valid (1 adapter, 0 tenants, no routing tree, ingest from NATS stream ALERTS (2 subjects) and MQTT (1 topic)), 1 warning`,
    );
  } finally {
    dir.remove();
  }
});

test('a file that cannot be read or is not YAML: one problem naming the file, exit 2', () => {
  const dir = tempDir();
  try {
    const missing = join(dir.path, 'missing.yml');
    const r1 = runCli(['check-config', missing]);
    assert.equal(r1.status, 2);
    assert.equal(r1.stderr, `${missing}: 1 problem\n  cannot read config file: ENOENT\n`);
    const broken = join(dir.path, 'broken.yml');
    writeFileSync(broken, 'adapters: [ { name: hook\n');
    const r2 = runCli(['check-config', broken]);
    assert.equal(r2.status, 2);
    assert.match(r2.stderr, /^.*broken\.yml: 1 problem\n {2}not valid YAML or JSON at line \d+, column \d+/);
    const none = runCli(['check-config']);
    assert.equal(none.status, 2, 'a file is required');
    // Several files: each one's verdict, and exit 2 when any is bad.
    const good = join(dir.path, 'good.yml');
    writeFileSync(good, 'incidents: { ttl_seconds: 60 }\n');
    const both = runCli(['check-config', good, missing]);
    assert.equal(both.status, 2);
    assert.equal(both.stdout, `${good}: valid (0 adapters, 0 tenants, no routing tree, no broker ingest)\n`);
    assert.equal(both.stderr, `${missing}: 1 problem\n  cannot read config file: ENOENT\n`);
  } finally {
    dir.remove();
  }
});

/** The config keys onceonly knows at the top level: a YAML block of only these in the docs is one of its configs. */
const CONFIG_KEYS = new Set(Object.keys(configSchema.shape));

test('every onceonly config shown in the README and docs/ passes check-config', () => {
  assert.ok(CONFIG_KEYS.has('adapters') && CONFIG_KEYS.has('incidents'), `the config's keys were found (${[...CONFIG_KEYS]})`);
  const dir = tempDir();
  try {
    const files = markdownPages(REPO_ROOT);
    const checked: string[] = [];
    const env: Record<string, string> = {};
    for (const doc of files) {
      const text = readFileSync(join(REPO_ROOT, doc), 'utf8');
      for (const m of text.matchAll(/```yaml\n([\s\S]*?)```/g)) {
        const line = text.slice(0, m.index).split('\n').length;
        const value = parse(m[1]!) as unknown;
        // Alertmanager's and Prometheus's files shown beside ours (receivers:, groups:, authorization:) are theirs.
        if (!value || typeof value !== 'object' || Array.isArray(value) || !Object.keys(value).every((k) => CONFIG_KEYS.has(k))) continue;
        // The secrets a config refers to, given as a deployment would: each ${env:…} set, each ${file:…} a file.
        const file = join(dir.path, `${doc.replace(/\W/g, '-')}-${line}.yml`);
        const body = m[1]!.replace(/\$\{(env|file):([^}]*)\}/g, (_all, kind: string, name: string) => {
          if (kind === 'env') {
            env[name] = `${name.toLowerCase()}-0123456789abcdef`;
            return `\${env:${name}}`;
          }
          const secret = `${file}.${name.replace(/\W/g, '-')}`;
          writeFileSync(secret, `secret-of-${name}-0123456789abcdef\n`);
          return `\${file:${secret}}`;
        });
        writeFileSync(file, body);
        checked.push(file);
      }
    }
    // One run for them all: each file's verdict is a line of its own.
    const r = runCli(['check-config', ...checked], undefined, env);
    assert.equal(r.stderr, '');
    assert.equal(r.status, 0);
    assert.deepEqual(
      r.stdout
        .trimEnd()
        .split('\n')
        .map((l) => l.split(': ')[0]),
      checked,
    );
    assert.ok(checked.length >= 35, `the docs' configs were found (${checked.length})`);
  } finally {
    dir.remove();
  }
});
