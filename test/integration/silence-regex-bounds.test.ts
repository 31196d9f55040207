import { test } from 'node:test';
import assert from 'node:assert/strict';
import { inProcessServer } from '../helpers/server.js';

/**
 * A silence matcher's regex is bounded by what it costs every replica: the
 * size of the program RE2 compiles it to, judged before compiling (one
 * `.{0,1000}` repeated 256 times once took 21.7 s to create and stalled
 * /healthz; as a `filter` it took 227 s). Each matcher, and all of a
 * tenant's silences that have not ended together, have a bound; past one the
 * request is refused, naming the bound, and nothing is stored.
 */

const huge = '.{0,1000}'.repeat(256);

for (const store of ['memory', 'sqlite'] as const) {
  test(`${store}: a regex past limits.regex_cost_per_matcher is refused before it is compiled, in a silence and in a filter`, async () => {
    const s = await inProcessServer({ store });
    try {
      const silence = (value: string) => ({
        matchers: [{ name: 'element_id', value, isRegex: true, isEqual: true }],
        startsAt: new Date(s.clock.now()).toISOString(),
        endsAt: new Date(s.clock.now() + 3_600_000).toISOString(),
        createdBy: 'noc',
        comment: 'cost',
      });
      const r = await s.post('/api/v2/silences', silence(huge));
      assert.equal(r.status, 400, JSON.stringify(r.body));
      assert.equal(r.body.error.code, 'invalid_input');
      assert.match(r.body.error.message, /about \d+ instructions; at most 2500 \(limits\.regex_cost_per_matcher\)/);
      const f = await s.get(`/api/v2/silences?filter=${encodeURIComponent(`element_id=~"${huge}"`)}`);
      assert.equal(f.status, 400, JSON.stringify(f.body));
      assert.match(f.body.error.message, /limits\.regex_cost_per_matcher/);
      assert.deepEqual((await s.get('/api/v2/silences')).body, [], 'nothing was stored');
      // One `.{0,1000}` (about 2,000) is within the default bound, and it mutes.
      const ok = await s.post('/api/v2/silences', silence('olt-.{0,1000}'));
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
      const d = await s.post('/v1/incidents', { element_id: 'olt-7', fault_class: 'LOS', root_cause_id: 'cut', severity: 'MAJOR' });
      assert.equal(d.body.muted?.by, 'silence');
    } finally {
      await s.stop();
    }
  });

  test(`${store}: a tenant's silences together stay within limits.regex_cost_per_tenant; an update and an expiry make room`, async () => {
    const s = await inProcessServer({ store, config: 'limits: { regex_cost_per_tenant: 5000 }\n' });
    try {
      const silence = (value: string, id?: string) => ({
        ...(id ? { id } : {}),
        matchers: [
          { name: 'element_id', value, isRegex: true, isEqual: true },
          { name: 'severity', value: 'MAJOR', isRegex: false, isEqual: true },
        ],
        startsAt: new Date(s.clock.now()).toISOString(),
        endsAt: new Date(s.clock.now() + 3_600_000).toISOString(),
        createdBy: 'noc',
        comment: 'cost',
      });
      const first = await s.post('/api/v2/silences', silence('a.{0,1000}'));
      const second = await s.post('/api/v2/silences', silence('b.{0,1000}'));
      assert.deepEqual([first.status, second.status], [200, 200]);
      const third = await s.post('/api/v2/silences', silence('c.{0,1000}'));
      assert.equal(third.status, 409, JSON.stringify(third.body));
      assert.equal(third.body.error.code, 'limit_reached');
      assert.match(third.body.error.message, /limits\.regex_cost_per_tenant/);
      assert.equal((await s.get('/api/v2/silences')).body.length, 2, 'the refused one was not stored');
      // Plain matchers cost nothing: a silence without a regex is never refused for cost.
      const plain = await s.post('/api/v2/silences', { ...silence('x'), matchers: [{ name: 'element_id', value: 'olt-9', isRegex: false, isEqual: true }] });
      assert.equal(plain.status, 200);
      // An update replaces its own cost rather than adding to it.
      const updated = await s.post('/api/v2/silences', silence('b2.{0,1000}', second.body.silenceID));
      assert.deepEqual([updated.status, updated.body.silenceID], [200, second.body.silenceID]);
      // An expired silence holds no cost.
      assert.equal((await s.del(`/api/v2/silence/${first.body.silenceID}`)).status, 200);
      const again = await s.post('/api/v2/silences', silence('c.{0,1000}'));
      assert.equal(again.status, 200, JSON.stringify(again.body));
    } finally {
      await s.stop();
    }
  });
}
