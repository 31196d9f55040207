// needs: alertmanager
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { spawnServer } from '../helpers/process.js';
import { tempDir } from '../helpers/tmp.js';

const run = promisify(execFile);
const ACME = 'amtool-acme-token-000000001';
const BETA = 'amtool-beta-token-000000002';

// The real amtool from Debian's prometheus-alertmanager, unchanged, against a
// running onceonly with tenants: its bearer token goes in through
// --http.config.file, as it would for an Alertmanager behind a proxy.
test('amtool adds, queries and expires silences against onceonly, with a bearer token per tenant', async () => {
  const dir = tempDir();
  const config = join(dir.path, 'c.yaml');
  writeFileSync(config, `tenants:\n  - { id: acme, tokens: ["${ACME}"] }\n  - { id: beta, tokens: ["${BETA}"] }\n`);
  const s = await spawnServer(['--port', '0', '--store', `sqlite:${join(dir.path, 'o.db')}`, '--config', config]);
  const auth = (token: string) => {
    const f = join(dir.path, `http-${token.slice(0, 11)}.yml`);
    writeFileSync(f, `authorization:\n  type: Bearer\n  credentials: ${token}\n`);
    return f;
  };
  const amtool = async (token: string, ...args: string[]) =>
    (await run('amtool', [`--alertmanager.url=${s.url}`, `--http.config.file=${auth(token)}`, ...args], { timeout: 30_000 })).stdout.trim();
  try {
    const id = await amtool(
      ACME,
      'silence',
      'add',
      'fault_class=LOS',
      'severity=~MAJOR|MINOR',
      '--comment=fiber work on ring 4',
      '--author=noc',
      '--duration=2h',
    );
    assert.match(id, /^[0-9a-f-]{36}$/, `amtool printed the new silence's id: ${id}`);

    const table = await amtool(ACME, 'silence', 'query');
    assert.match(table, new RegExp(`${id}\\s+fault_class="LOS" severity=~"MAJOR\\|MINOR"`), table);
    assert.match(table, /noc\s+fiber work on ring 4/);
    const json = JSON.parse(await amtool(ACME, 'silence', 'query', '-o', 'json', 'fault_class=LOS')) as Array<{ id: string; status: { state: string } }>;
    assert.deepEqual(
      json.map((x) => [x.id, x.status.state]),
      [[id, 'active']],
    );
    assert.equal(await amtool(ACME, 'silence', 'query', '-q', 'fault_class=LOF'), '', 'a filter that matches nothing');
    assert.equal(await amtool(BETA, 'silence', 'query', '-q'), '', "another tenant sees none of acme's silences");
    await assert.rejects(amtool(BETA, 'silence', 'expire', id), /not_found|404|no silence/i, 'nor can it expire one');
    await assert.rejects(amtool('not-a-token-of-anyone-123', 'silence', 'query'), /401|unauthorized/i, 'a wrong token is refused');

    await amtool(ACME, 'silence', 'expire', id);
    assert.equal(await amtool(ACME, 'silence', 'query', '-q'), '', 'expired: no longer listed as active');
    const expired = await amtool(ACME, 'silence', 'query', '--expired', '-q');
    assert.equal(expired, id, 'listed with --expired');
  } finally {
    await s.stop();
    dir.remove();
  }
});
