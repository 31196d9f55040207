// needs: redis postgres
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { startServer, type RunningServer } from '../../src/app/start.js';
import { LIMIT_DEFAULTS } from '../../src/config/schema.js';
import { NDJSON } from '../../src/http/batch.js';
import { BACKENDS, backendStores } from '../helpers/backends.js';
import { inProcessServer, type InProcessServer } from '../helpers/server.js';
import { tempDir } from '../helpers/tmp.js';
import { testSeed } from '../helpers/seed.js';

/** A small seeded generator, so a failure can be replayed line by line. */
function rng(seed: number) {
  let x = seed >>> 0 || 1;
  return (n: number) => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) % n;
  };
}

/** Lines for one route: mostly valid, repeating keys (SUPPRESS, UPDATE, duplicates, gaps), and a few bad ones. */
function lines(route: string, n: number, seed: number): string[] {
  const r = rng(seed);
  const bad = ['{not json', '[]', 'null', '""', JSON.stringify({ element_id: 'x\u0000' }), '', '   ', JSON.stringify({ process_id: 1 })];
  return Array.from({ length: n }, () => {
    if (r(40) === 0) return bad[r(bad.length)]!;
    if (route === '/v1/incidents')
      return JSON.stringify({
        element_id: `olt-${r(400)}`,
        fault_class: ['LOS', 'LOF'][r(2)],
        root_cause_id: 'cut',
        severity: ['CRITICAL', 'MAJOR', 'MINOR'][r(3)],
        ...(r(4) === 0 ? { cleared: true } : {}),
        ...(r(3) === 0 ? { summary: `s${r(9)}`, details: { port: r(48) } } : {}),
      });
    if (route === '/v1/events')
      return JSON.stringify({
        tenant_id: 'default',
        device_id: `pos-${r(25)}`,
        boot_id: `b${r(2)}`,
        sequence: r(80),
        state: ['IDLE', 'RUN', 'STOPPED'][r(3)],
        observed_at: '2026-12-01T00:00:00Z',
      });
    return JSON.stringify({
      process_id: `etch-${r(30)}`,
      rule_id: ['nelson_1', 'nelson_2', 'we_zone_b'][r(3)],
      timestamp: 1_770_000_000 + r(3000),
      value: 13,
      center: 10,
      ucl: 12,
      lcl: 8,
    });
  });
}

const ROUTES = ['/v1/incidents', '/v1/events', '/v1/violations'] as const;
/** 10,000 mixed lines in all, per store. */
const COUNTS = { '/v1/incidents': 7000, '/v1/events': 1500, '/v1/violations': 1500 };

/**
 * What one line answers: the body of a 200, or the error's code (a JSON parse
 * error is worded by whoever parsed it). A SUPPRESS's `lost_race` and
 * `unchanged` differ only in how long after the CREATE it came, which on a
 * store with its own clock (Redis) is wall time, not what was sent: they
 * compare as one.
 */
const same = (body: any) => (body?.reason === 'lost_race' ? { ...body, reason: 'unchanged' } : body);
const shape = (status: number, body: any) => (status === 200 ? same(body) : { error: body.error.code });

async function compare(batchServer: RunningServer, singleServer: InProcessServer, seed: number): Promise<Record<string, Record<string, number>>> {
  const tally: Record<string, Record<string, number>> = {};
  for (const route of ROUTES) {
    const input = lines(route, COUNTS[route], seed + route.length);
    const res = await batchServer.app.inject({ method: 'POST', url: route, headers: { 'content-type': NDJSON }, payload: `${input.join('\n')}\n` });
    assert.equal(res.statusCode, 200, res.payload.slice(0, 300));
    assert.match(String(res.headers['content-type']), /^application\/x-ndjson/);
    const answers = res.payload
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.equal(answers.length, input.length, 'one answer line per input line');
    const t: Record<string, number> = {};
    for (const [i, line] of input.entries()) {
      const one = await singleServer.app.inject({ method: 'POST', url: route, headers: { 'content-type': 'application/json' }, payload: line });
      const expected = shape(one.statusCode, JSON.parse(one.payload));
      const got = answers[i].error ? { error: answers[i].error.code } : same(answers[i]);
      assert.deepEqual(got, expected, `seed ${seed}, ${route} line ${i + 1}: ${line.slice(0, 120)}`);
      const what = got.error ? `error:${got.error}` : String(got.decision ?? got.outcome);
      t[what] = (t[what] ?? 0) + 1;
    }
    tally[route] = t;
  }
  return tally;
}

const SEED = testSeed('integration/batches', 'ONCEONLY_BATCH_SEED');

describe(`a batch decides exactly what its lines sent one by one decide (seed ${SEED})`, () => {
  const dir = tempDir();
  after(() => dir.remove());
  const serve = async (store: string, name: string) => {
    const config = join(dir.path, `${name}.yaml`);
    writeFileSync(config, `failopen: { timeout_ms: 5000, journal_path: ${join(dir.path, `${name}-journal.db`)} }\n`);
    return startServer({ port: 0, host: '127.0.0.1', store, configPath: config, logger: pino({ level: 'silent' }) });
  };

  for (const kind of BACKENDS) {
    describe(kind, () => {
      const stores = backendStores(kind);
      before(() => stores.start());
      after(() => stores.stop());
      test(`${kind}: every line of every route as decided one by one`, async () => {
        const fresh = await stores.fresh();
        // The reference decides the same lines one by one on the memory store (the contract suites hold every store to it).
        const a = await serve(fresh === 'sqlite' ? `sqlite:${join(dir.path, 'batch.db')}` : fresh === 'memory' ? 'memory:' : fresh, `${kind}-a`);
        const b = await inProcessServer({ store: 'memory' });
        try {
          const tally = await compare(a, b, SEED);
          // The lines exercised every outcome, so the comparison means something.
          assert.ok(
            (tally['/v1/incidents']!.CREATE ?? 0) > 100 && (tally['/v1/incidents']!.SUPPRESS ?? 0) > 100 && (tally['/v1/incidents']!.UPDATE ?? 0) > 100,
            JSON.stringify(tally),
          );
          assert.ok(
            (tally['/v1/events']!.applied ?? 0) > 50 && (tally['/v1/events']!.duplicate ?? 0) > 10 && (tally['/v1/events']!.rejected ?? 0) > 50,
            JSON.stringify(tally),
          );
          assert.ok((tally['/v1/violations']!.CREATE ?? 0) > 50 && (tally['/v1/violations']!.SUPPRESS ?? 0) > 50, JSON.stringify(tally));
          assert.ok(
            Object.keys(tally['/v1/incidents']!).some((k) => k.startsWith('error:')),
            'bad lines were in the batch',
          );
          // The events accounting holds across a batch with refused lines, as across single requests.
          const [sa, sb] = await Promise.all([a, b].map(async (s) => JSON.parse((await s.app.inject({ method: 'GET', url: '/v1/stats' })).payload)));
          assert.deepEqual(sa, sb, 'the same event stats either way');
          // Against what the client got back, line by line: not against the server's own sum, which holds by construction.
          const ev = tally['/v1/events']!;
          const refused = Object.entries(ev)
            .filter(([k]) => k === 'rejected' || k.startsWith('error:'))
            .reduce((x, [, n]) => x + n, 0);
          assert.deepEqual(
            {
              received: sa.received,
              applied: sa.applied,
              duplicate: sa.duplicate,
              rejected: Object.values(sa.rejected as Record<string, number>).reduce((x, y) => x + y, 0),
            },
            { received: COUNTS['/v1/events'], applied: ev.applied ?? 0, duplicate: ev.duplicate ?? 0, rejected: refused },
            "the server's event accounting is the client's count of the answers it got",
          );
        } finally {
          await a.close();
          await b.stop();
        }
      });
    });
  }
});

describe('batch limits', () => {
  let s: InProcessServer;
  before(async () => {
    s = await inProcessServer({
      store: 'memory',
      config:
        'tenants:\n  - { id: acme, tokens: [batch-token-acme-0000001], rate_limit: { per_second: 1, burst: 100 } }\n  - { id: big, tokens: [batch-token-big-00000002], rate_limit: { per_second: 1000000, burst: 1000000 } }\n',
    });
  });
  after(() => s.stop());
  const post = (url: string, payload: string | Buffer, token = 'batch-token-big-00000002', type = NDJSON) =>
    s.app.inject({ method: 'POST', url, headers: { 'content-type': type, authorization: `Bearer ${token}` }, payload });
  const incident = (i: number) => JSON.stringify({ element_id: `e${i}`, fault_class: 'LOS', root_cause_id: 'c', severity: 'MAJOR' });
  const live = async () =>
    JSON.parse((await s.app.inject({ method: 'GET', url: '/v1/incidents?limit=1000', headers: { authorization: 'Bearer batch-token-big-00000002' } })).payload)
      .incidents.length;

  test(`by default more than ${LIMIT_DEFAULTS.batch_lines} lines, or more than 16 MiB, is 413 and decides nothing`, async () => {
    const tooMany = Array.from({ length: LIMIT_DEFAULTS.batch_lines + 1 }, (_, i) => incident(i)).join('\n');
    const r = await post('/v1/incidents', tooMany);
    assert.equal(r.statusCode, 413);
    assert.match(JSON.parse(r.payload).error.message, /at most 10,000 lines \(limits\.batch_lines\)/);
    const exactly = `${Array.from({ length: LIMIT_DEFAULTS.batch_lines }, () => '{}').join('\n')}\n`;
    assert.equal((await post('/v1/violations', exactly)).statusCode, 200, '10,000 lines with a final line break pass');
    const huge = Buffer.alloc(LIMIT_DEFAULTS.batch_bytes + 1024, 0x20);
    const big = await post('/v1/events', huge);
    assert.equal(big.statusCode, 413);
    assert.match(JSON.parse(big.payload).error.message, /at most 16 MiB \(limits\.batch_bytes\)/);
    assert.equal(await live(), 0);
  });

  test('NDJSON on any other route is 415; an empty batch is 400; a single JSON body keeps its 512 KiB limit', async () => {
    const am = await post('/v1/alertmanager', `${incident(1)}\n`);
    assert.equal(am.statusCode, 415);
    assert.equal((await post('/v1/incidents', '')).statusCode, 400);
    const fat = JSON.stringify({ element_id: 'e', fault_class: 'LOS', root_cause_id: 'c', severity: 'MAJOR', summary: 'x'.repeat(600 * 1024) });
    assert.equal((await post('/v1/incidents', fat, undefined, 'application/json')).statusCode, 413);
    assert.equal(await live(), 0);
  });

  test("each line costs a token: past the tenant's burst is 413, past what is left is 429, and nothing of it is decided", async () => {
    const batch = (n: number) => `${Array.from({ length: n }, (_, i) => incident(i)).join('\n')}\n`;
    const over = await post('/v1/incidents', batch(101), 'batch-token-acme-0000001');
    assert.equal(over.statusCode, 413);
    assert.match(JSON.parse(over.payload).error.message, /at most 100 at once/);
    assert.equal((await post('/v1/incidents', batch(60), 'batch-token-acme-0000001')).statusCode, 200);
    const spent = await post('/v1/incidents', batch(60), 'batch-token-acme-0000001');
    assert.equal(spent.statusCode, 429);
    assert.ok(Number(spent.headers['retry-after']) >= 1);
    const mine = JSON.parse(
      (await s.app.inject({ method: 'GET', url: '/v1/incidents?limit=1000', headers: { authorization: 'Bearer batch-token-acme-0000001' } })).payload,
    );
    assert.equal(mine.incidents.length, 60, 'only the batch that was paid for was decided');
  });
});

describe('the body and batch bounds are config values', () => {
  let s: InProcessServer;
  before(async () => {
    s = await inProcessServer({ store: 'memory', config: 'limits: { body_bytes: 20480, batch_lines: 5, batch_bytes: 65536 }\n' });
  });
  after(() => s.stop());
  const post = (payload: string | Buffer, type: string) => s.app.inject({ method: 'POST', url: '/v1/incidents', headers: { 'content-type': type }, payload });
  const incident = (i: number, note = '') =>
    JSON.stringify({ element_id: `e${i}`, fault_class: 'LOS', root_cause_id: 'c', severity: 'MAJOR', details: { note } });

  test('past each configured bound: 413 naming it, and nothing decided; at it, decided', async () => {
    const body = await post(incident(1, 'x'.repeat(21 * 1024)), 'application/json');
    assert.equal(body.statusCode, 413);
    assert.equal(JSON.parse(body.payload).error.message, 'request body is larger than 20 KiB (limits.body_bytes)');
    const lines = await post(`${Array.from({ length: 6 }, (_, i) => incident(i)).join('\n')}\n`, NDJSON);
    assert.equal(lines.statusCode, 413);
    assert.equal(JSON.parse(lines.payload).error.message, 'a batch is at most 5 lines (limits.batch_lines)');
    const bytes = await post(Buffer.alloc(65536 + 1, 0x20), NDJSON);
    assert.equal(bytes.statusCode, 413);
    assert.equal(JSON.parse(bytes.payload).error.message, 'a batch is at most 64 KiB (limits.batch_bytes)');
    assert.equal((await s.get('/v1/incidents')).body.incidents.length, 0, 'nothing refused was decided');
    assert.equal((await post(incident(1, 'x'.repeat(19 * 1024)), 'application/json')).statusCode, 200);
    assert.equal((await post(`${Array.from({ length: 5 }, (_, i) => incident(i + 10)).join('\n')}\n`, NDJSON)).statusCode, 200);
    assert.equal((await s.get('/v1/incidents')).body.incidents.length, 6);
  });
});
