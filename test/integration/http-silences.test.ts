import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { manualClock } from '../../src/core/clock.js';
import { SilenceCache } from '../../src/mute/silence-cache.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { inProcessServer, type InProcessServer } from '../helpers/server.js';
import { tempDir } from '../helpers/tmp.js';
import { until } from '../helpers/wait.js';

const A = 'token-of-tenant-acme-0001';
const B = 'token-of-tenant-beta-0002';
const H = 3_600_000;

describe('HTTP: silences (Alertmanager API v2)', () => {
  let s: InProcessServer;
  const as = (token: string) => async (method: 'GET' | 'POST' | 'DELETE', url: string, body?: unknown) => {
    const res = await s.app.inject({ method, url, headers: { authorization: `Bearer ${token}` }, ...(body === undefined ? {} : { payload: body as object }) });
    return { status: res.statusCode, body: res.payload ? JSON.parse(res.payload) : null };
  };
  const acme = as(A);
  const beta = as(B);
  const at = (ms: number) => new Date(ms).toISOString();
  const silence = (over: Record<string, unknown> = {}) => ({
    matchers: [
      { name: 'fault_class', value: 'LOS', isRegex: false, isEqual: true },
      { name: 'severity', value: 'MAJOR|MINOR', isRegex: true, isEqual: true },
    ],
    startsAt: at(s.clock.now()),
    endsAt: at(s.clock.now() + 2 * H),
    createdBy: 'noc',
    comment: 'fiber work on ring 4',
    ...over,
  });

  before(async () => {
    s = await inProcessServer({ store: 'memory', config: `tenants:\n  - { id: acme, tokens: ["${A}"] }\n  - { id: beta, tokens: ["${B}"] }\n` });
  });
  after(() => s.stop());

  test('create, list with its state, get, update by id, expire: the shapes amtool reads', async () => {
    const made = await acme('POST', '/api/v2/silences', silence());
    assert.equal(made.status, 200);
    const id = made.body.silenceID as string;
    assert.match(id, /^[0-9a-f-]{36}$/);
    const one = await acme('GET', `/api/v2/silence/${id}`);
    assert.deepEqual(one.body, {
      id,
      status: { state: 'active' },
      updatedAt: at(s.clock.now()),
      matchers: silence().matchers,
      startsAt: at(s.clock.now()),
      endsAt: at(s.clock.now() + 2 * H),
      createdBy: 'noc',
      comment: 'fiber work on ring 4',
    });
    const later = await acme('POST', '/api/v2/silences', silence({ startsAt: at(s.clock.now() + H), endsAt: at(s.clock.now() + 3 * H), comment: 'later' }));
    const listed = (await acme('GET', '/api/v2/silences')).body as Array<{ id: string; status: { state: string } }>;
    assert.deepEqual(
      listed.map((x) => [x.id, x.status.state]),
      [
        [id, 'active'],
        [later.body.silenceID, 'pending'],
      ],
    );
    const filtered = (await acme('GET', `/api/v2/silences?filter=${encodeURIComponent('comment="x"')}&filter=${encodeURIComponent('fault_class="LOS"')}`)).body;
    assert.deepEqual(filtered, [], 'a filter on a name no matcher has lists nothing');
    const byFault = (await acme('GET', `/api/v2/silences?filter=${encodeURIComponent('severity=~"MAJOR.*"')}`)).body as unknown[];
    assert.equal(byFault.length, 2, 'a filter matcher matches the value of a matcher of its name');

    const upd = await acme('POST', '/api/v2/silences', { ...silence({ comment: 'extended' }), id, endsAt: at(s.clock.now() + 4 * H) });
    assert.deepEqual(upd.body, { silenceID: id }, 'an update keeps the id');
    assert.equal((await acme('GET', `/api/v2/silence/${id}`)).body.comment, 'extended');

    s.clock.advance(1000);
    assert.equal((await acme('DELETE', `/api/v2/silence/${id}`)).status, 200);
    const ended = (await acme('GET', `/api/v2/silence/${id}`)).body;
    assert.deepEqual([ended.status.state, ended.endsAt], ['expired', at(s.clock.now())]);
    const again = await acme('POST', '/api/v2/silences', { ...silence(), id });
    assert.equal(again.status, 200);
    assert.notEqual(again.body.silenceID, id, 'updating an ended silence makes a new one, as Alertmanager does');
  });

  test("one tenant cannot see, change or expire another's silences", async () => {
    const id = (await acme('POST', '/api/v2/silences', silence({ comment: 'acme only' }))).body.silenceID as string;
    assert.equal((await beta('GET', `/api/v2/silence/${id}`)).status, 404);
    assert.ok(((await beta('GET', '/api/v2/silences')).body as Array<{ id: string }>).every((x) => x.id !== id));
    assert.equal((await beta('DELETE', `/api/v2/silence/${id}`)).status, 404);
    assert.equal((await beta('POST', '/api/v2/silences', { ...silence(), id })).status, 404);
    const still = (await acme('GET', `/api/v2/silence/${id}`)).body;
    assert.deepEqual([still.status.state, still.comment], ['active', 'acme only'], 'untouched');
    const noToken = await s.app.inject({ method: 'GET', url: '/api/v2/silences' });
    assert.equal(noToken.statusCode, 401);
  });

  test('every bad silence is refused with a reason, and nothing is stored', async () => {
    const before = (await beta('GET', '/api/v2/silences')).body as unknown[];
    const m = (name: string, value: string, isRegex = false, isEqual = true) => [{ name, value, isRegex, isEqual }];
    const cases: Array<[unknown, RegExp]> = [
      [silence({ matchers: m('fault_class', '.*', true) }), /empty string/],
      [silence({ matchers: m('fault_class', '', false, true) }), /empty string/],
      [silence({ matchers: m('severity', '(MAJOR', true) }), /missing closing/],
      [silence({ matchers: m('bad-name', 'x') }), /label name/],
      [silence({ matchers: [] }), /at least one matcher/],
      [silence({ matchers: Array.from({ length: 65 }, (_, i) => ({ name: `l${i}`, value: 'x', isRegex: false, isEqual: true })) }), /64/],
      [silence({ endsAt: at(s.clock.now() - 1000) }), /past/],
      [silence({ startsAt: at(s.clock.now() + 2 * H), endsAt: at(s.clock.now() + H) }), /after startsAt/],
      [silence({ endsAt: 'tomorrow' }), /RFC 3339/],
      [silence({ createdBy: '' }), /createdBy/],
      [silence({ comment: 'x'.repeat(5000) }), /comment/],
      [{ ...silence(), id: 'not-a-uuid' }, /UUID/],
    ];
    for (const [body, why] of cases) {
      const r = await beta('POST', '/api/v2/silences', body);
      assert.equal(r.status, 400, JSON.stringify(body).slice(0, 120));
      assert.match(r.body.error.message, why);
    }
    assert.equal((await beta('POST', '/api/v2/silences', { ...silence(), id: '00000000-0000-4000-8000-000000000000' })).status, 404, 'an unknown id');
    assert.equal((await beta('GET', '/api/v2/silence/nope')).status, 400);
    assert.equal((await beta('DELETE', '/api/v2/silence/00000000-0000-4000-8000-000000000000')).status, 404);
    assert.equal((await beta('GET', '/api/v2/silences?silenced=true')).status, 400, 'an unknown query parameter');
    assert.match((await beta('GET', `/api/v2/silences?filter=${encodeURIComponent('a=~"("')}`)).body.error.message, /invalid filter/);
    assert.deepEqual((await beta('GET', '/api/v2/silences')).body, before, 'nothing stored');
  });

  test('a tenant may have 1,000 silences that have not ended; the next is refused until one ends', async () => {
    const gamma = `token-of-tenant-many-${Date.now()}`;
    await s.stop();
    s = await inProcessServer({ store: 'memory', config: `tenants:\n  - { id: many, tokens: ["${gamma}"], rate_limit: { per_second: 5000, burst: 5000 } }\n` });
    const many = as(gamma);
    for (let i = 0; i < 1000; i++) assert.equal((await many('POST', '/api/v2/silences', silence())).status, 200);
    const refused = await many('POST', '/api/v2/silences', silence());
    assert.deepEqual([refused.status, refused.body.error.code], [409, 'limit_reached']);
    const [first] = (await many('GET', '/api/v2/silences')).body as Array<{ id: string }>;
    await many('DELETE', `/api/v2/silence/${first!.id}`);
    assert.equal((await many('POST', '/api/v2/silences', silence())).status, 200);
  });

  // Planted fault it catches: the ended bound fixed at 1,000 instead of limits.ended_silences_per_tenant.
  test('the silence bounds are config values: open and ended counts, and characters; a reload raises them', async () => {
    const token = `token-of-tenant-bounds-${Date.now()}`;
    const tenants = `tenants:\n  - { id: bounds, tokens: ["${token}"] }\n`;
    await s.stop();
    s = await inProcessServer({ store: 'memory', config: `${tenants}limits: { silences_per_tenant: 3, ended_silences_per_tenant: 2, silence_chars: 1024 }\n` });
    const mine = as(token);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await mine('POST', '/api/v2/silences', silence())).body.silenceID);
    const refused = await mine('POST', '/api/v2/silences', silence());
    assert.deepEqual([refused.status, refused.body.error.code], [409, 'limit_reached']);
    assert.match(refused.body.error.message, /already has 3 silences that have not ended \(limits\.silences_per_tenant\)/);
    // Ended ones are kept up to their own bound: the third expired is trimmed away by the next create.
    for (const id of ids) assert.equal((await mine('DELETE', `/api/v2/silence/${id}`)).status, 200);
    s.clock.advance(1000);
    assert.equal((await mine('POST', '/api/v2/silences', silence())).status, 200);
    const listed = (await mine('GET', '/api/v2/silences')).body as Array<{ id: string; status: { state: string } }>;
    assert.deepEqual(listed.map((x) => x.status.state).sort(), ['active', 'expired', 'expired']);
    const long = await mine('POST', '/api/v2/silences', silence({ comment: 'c'.repeat(1000) }));
    assert.equal(long.status, 400);
    assert.match(long.body.error.message, /at most 1024 characters of matchers, createdBy and comment together \(limits\.silence_chars\)/);
    s.writeConfig(`${tenants}limits: { silences_per_tenant: 3, ended_silences_per_tenant: 2, silence_chars: 2048 }\n`);
    s.config.reload();
    assert.equal((await mine('POST', '/api/v2/silences', silence({ comment: 'c'.repeat(1000) }))).status, 200, 'raised by the reload');
  });
});

test('a silence made through one replica is applied by another within a second, and survives a restart', async () => {
  const dir = tempDir();
  const file = join(dir.path, 'shared.db');
  const clock = manualClock(Date.now());
  const a = new SqliteStore(file, clock);
  const b = new SqliteStore(file, clock);
  const cacheB = new SilenceCache(b.silences, (err) => assert.fail(String(err)), 200);
  try {
    await cacheB.start();
    const labels = { fault_class: 'LOS', severity: 'MAJOR', kind: 'incident' };
    assert.equal(cacheB.mutedBy('acme', labels, clock.now()), null);
    const now = clock.now();
    const s = {
      id: 'a1b2',
      tenant: 'acme',
      matchers: [{ name: 'fault_class', value: 'LOS', isRegex: false, isEqual: true }],
      startsAt: now,
      endsAt: now + H,
      createdBy: 'x',
      comment: 'y',
      updatedAt: now,
    };
    await a.silences.create(s, { open: 10, ended: 1000 }, now);
    const t0 = performance.now();
    await until(
      () => cacheB.mutedBy('acme', labels, clock.now()) !== null,
      5000,
      () => 'replica B never applied the silence',
    );
    console.log(`replica B applied the silence after ${(performance.now() - t0).toFixed(0)} ms (poll 200 ms)`);
    assert.deepEqual(cacheB.mutedBy('acme', labels, clock.now()), { by: 'silence', id: 'a1b2' });
    assert.equal(cacheB.mutedBy('beta', labels, clock.now()), null, 'only its tenant');
    assert.equal(cacheB.mutedBy('acme', { ...labels, fault_class: 'LOF' }, clock.now()), null, 'only what it matches');
    await a.silences.expire('acme', 'a1b2', clock.now());
    await until(
      () => cacheB.mutedBy('acme', labels, clock.now()) === null,
      5000,
      () => 'replica B never saw the expiry',
    );
  } finally {
    cacheB.stop();
    await a.close();
    await b.close();
  }
  // A restart: a new process opens the file and finds the silence, expired, as it was left.
  const reopened = new SqliteStore(file, clock);
  try {
    const [kept] = await reopened.silences.list('acme');
    assert.equal(kept?.id, 'a1b2');
    assert.ok(kept!.endsAt <= clock.now());
  } finally {
    await reopened.close();
    dir.remove();
  }
});
