import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { request, type IncomingMessage } from 'node:http';
import { connect } from 'node:net';
import { LIMIT_DEFAULTS } from '../../src/config/schema.js';
import { inProcessServer, type InProcessServer } from '../helpers/server.js';
import { until } from '../helpers/wait.js';

let s: InProcessServer;
before(async () => {
  // Snapshots every 5 ms, so a client that does not read falls a megabyte behind in seconds, not minutes.
  s = await inProcessServer({ store: 'memory', dashboardIntervalMs: 5 });
});
after(() => s.stop());

/** Opens a dashboard stream of the server at `url` (with a token, when given) and resolves once the headers are in. */
const streamOf = (url: string, token?: string) =>
  new Promise<IncomingMessage>((resolve, reject) => {
    const req = request(`${url}/v1/dashboard/stream`, token ? { headers: { authorization: `Bearer ${token}` } } : {}, resolve);
    req.on('error', reject);
    req.end();
  });
const open = () => streamOf(s.url);

test(`dashboard streams are capped per tenant (${LIMIT_DEFAULTS.dashboard_streams_per_tenant} by default); a closed one frees its place`, async () => {
  const held: IncomingMessage[] = [];
  for (let i = 0; i < LIMIT_DEFAULTS.dashboard_streams_per_tenant; i++) {
    const res = await open();
    assert.equal(res.statusCode, 200);
    held.push(res);
  }
  const refused = await open();
  assert.equal(refused.statusCode, 429);
  assert.ok(Number(refused.headers['retry-after']) >= 1);
  let body = '';
  for await (const chunk of refused) body += chunk;
  assert.equal(JSON.parse(body).error.code, 'rate_limited');
  assert.match(JSON.parse(body).error.message, /too many open dashboard streams/);

  held.pop()!.destroy();
  const again = await until(async () => {
    const res = await open();
    if (res.statusCode === 200) return res;
    res.resume();
    return null;
  }, 5000);
  held.push(again);
  for (const res of held) res.destroy();
});

test(`a stream whose client stops reading is dropped once ${LIMIT_DEFAULTS.dashboard_unsent_bytes / 1024 / 1024} MiB waits unsent, freeing its place; a snapshot stays bounded`, async () => {
  // Large snapshots: 150 incidents with 1 KiB summaries (the snapshot lists 100 of them).
  for (let i = 0; i < 150; i++) {
    const r = await s.post('/v1/incidents', { element_id: `olt-${i}`, fault_class: 'LOS', root_cause_id: 'cut', severity: 'MAJOR', summary: 's'.repeat(1024) });
    assert.equal(r.status, 200);
  }
  const snap = JSON.stringify((await s.get('/v1/dashboard')).body);
  assert.equal(JSON.parse(snap).incidents.length, 100, 'a snapshot lists at most 100 incidents');
  assert.ok(snap.length < 256 * 1024, `a snapshot is bounded (${snap.length} bytes)`);

  // A client that asks for the stream and then never reads a byte.
  const { port } = new URL(s.url);
  const stuck = connect(Number(port), '127.0.0.1');
  let closed = false;
  stuck.on('close', () => (closed = true));
  stuck.on('error', () => {});
  // It reads the answer's first bytes, so its stream holds its place before the readers ask for theirs, then stops.
  const admitted = new Promise((resolve) => stuck.once('data', resolve));
  stuck.write(`GET /v1/dashboard/stream HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
  assert.match(String(await admitted), /^HTTP\/1\.1 200/);
  stuck.pause();
  // Every other place of this tenant taken by clients that do read.
  const readers: IncomingMessage[] = [];
  await until(async () => {
    const res = await open();
    if (res.statusCode !== 200) {
      res.resume();
      return readers.length === LIMIT_DEFAULTS.dashboard_streams_per_tenant - 1;
    }
    res.resume();
    readers.push(res);
    return readers.length === LIMIT_DEFAULTS.dashboard_streams_per_tenant - 1;
  }, 5000);
  const full = await open();
  assert.equal(full.statusCode, 429, 'the stuck client holds the last place');
  full.resume();
  // Dropped: its place comes free while the readers keep theirs.
  const freed = await until(
    async () => {
      const res = await open();
      if (res.statusCode === 200) return res;
      res.resume();
      return null;
    },
    60_000,
    () => 'the stuck stream was never dropped',
  );
  assert.ok(
    readers.every((r) => !r.destroyed && !r.complete),
    'the clients that read were kept',
  );
  stuck.resume();
  await until(
    () => closed,
    5000,
    () => 'the stuck client was not disconnected',
  );
  freed.destroy();
  for (const r of readers) r.destroy();
});

test('the stream bounds are config values, and a reload changes them for the next stream', async () => {
  const limits = (each: number, total: number) => `limits: { dashboard_streams_per_tenant: ${each}, dashboard_streams: ${total} }\n`;
  const tenants = 'tenants:\n  - { id: acme, tokens: [token-of-acme-0000000001] }\n  - { id: beta, tokens: [token-of-beta-0000000002] }\n';
  const t = await inProcessServer({ store: 'memory', dashboardIntervalMs: 50, config: tenants + limits(2, 3) });
  const held: IncomingMessage[] = [];
  const stream = (token: string) => streamOf(t.url, token);
  const refusal = async (res: IncomingMessage) => {
    let body = '';
    for await (const chunk of res) body += chunk;
    return [res.statusCode, JSON.parse(body).error.message];
  };
  try {
    const [acme, beta] = ['token-of-acme-0000000001', 'token-of-beta-0000000002'];
    const opened = async (token: string) => {
      const res = await stream(token);
      assert.equal(res.statusCode, 200);
      res.resume();
      held.push(res);
    };
    await opened(acme);
    await opened(acme);
    assert.deepEqual(await refusal(await stream(acme)), [
      429,
      'too many open dashboard streams (2 for tenant acme (limits.dashboard_streams_per_tenant)); close one, or poll GET /v1/dashboard',
    ]);
    await opened(beta);
    assert.deepEqual(await refusal(await stream(beta)), [
      429,
      'too many open dashboard streams (3 in all (limits.dashboard_streams)); close one, or poll GET /v1/dashboard',
    ]);
    t.writeConfig(tenants + limits(3, 4));
    t.config.reload();
    const third = await stream(acme);
    assert.equal(third.statusCode, 200, 'the raised bound holds for the next stream');
    third.resume();
    held.push(third);
    assert.equal((await stream(acme)).statusCode, 429);
  } finally {
    for (const r of held) r.destroy();
    await t.stop();
  }
});

test('a reload that revokes a token ends the streams opened with it; a stream of a token kept goes on', async () => {
  const keep = 'token-of-tenant-kept-00001';
  const drop = 'token-of-tenant-gone-00002';
  const tenants = (tokens: string[]) => `tenants:\n  - { id: acme, tokens: [${tokens.map((t) => JSON.stringify(t)).join(', ')}] }\n`;
  const t = await inProcessServer({ store: 'memory', dashboardIntervalMs: 20, config: tenants([keep, drop]) });
  try {
    const stream = (token: string) => streamOf(t.url, token);
    const [kept, gone] = [await stream(keep), await stream(drop)];
    assert.deepEqual([kept.statusCode, gone.statusCode], [200, 200]);
    let goneText = '';
    let keptText = '';
    gone.on('data', (c) => (goneText += c));
    kept.on('data', (c) => (keptText += c));
    let ended = false;
    gone.on('end', () => (ended = true));
    await until(async () => goneText.includes('event: snapshot') || null, 5000);

    t.writeConfig(tenants([keep]));
    t.config.reload();
    await until(
      async () => ended || null,
      10_000,
      () => 'the stream of the revoked token is still open',
    );
    assert.match(goneText, /event: error\ndata: \{"message":"the token of this stream is no longer valid; the stream ends"\}/);
    const before = keptText.length;
    await until(
      async () => keptText.length > before || null,
      5000,
      () => 'the kept stream stopped',
    );
    assert.ok(!kept.complete, 'the stream of a kept token is still open');
    kept.destroy();
  } finally {
    await t.stop();
  }
});

test('a snapshot lists at most 50 silences, long text cut, and counts them all; it reads the replica’s copy, not the store', async () => {
  const t = await inProcessServer({ store: 'memory' });
  try {
    for (let i = 0; i < 70; i++) {
      const r = await t.post('/api/v2/silences', {
        matchers: Array.from({ length: 60 }, (_, j) => ({ name: `l${j}`, value: `${i}-${'v'.repeat(j === 0 ? 4000 : 100)}`, isRegex: false, isEqual: true })),
        startsAt: new Date(t.clock.now()).toISOString(),
        endsAt: new Date(t.clock.now() + 3_600_000 + i * 1000).toISOString(),
        createdBy: 'noc',
        comment: 'c'.repeat(4000),
      });
      assert.equal(r.status, 200, JSON.stringify(r.body));
    }
    const listed = JSON.stringify((await t.get('/api/v2/silences')).body);
    const snap = (await t.get('/v1/dashboard')).body;
    assert.equal(snap.silences.length, 50);
    assert.equal(snap.silences_total, 70);
    assert.match(snap.silences[0].matchers[0].value, /^0-v+…$/, 'soonest to end first');
    assert.equal(snap.silences[0].comment.length, 201);
    assert.deepEqual([snap.silences[0].matchers.length, snap.silences[0].more_matchers], [8, 52]);
    const size = JSON.stringify(snap).length;
    assert.ok(size < 256 * 1024 && size * 10 < listed.length, `snapshot ${size} bytes, the silences listed whole ${listed.length}`);
  } finally {
    await t.stop();
  }
});
