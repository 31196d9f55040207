/**
 * A key's history costs what it is bounded to, whatever a producer sends: an
 * arrival's labels are kept up to a budget (63 labels of 4 KiB each made a
 * 40 MB history), and GET …/history answers in pages (`limit`, `before`),
 * a bad page refused naming the parameter.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ARRIVAL_LABEL_CHARS } from '../../src/history/decisions.js';
import { inProcessServer } from '../helpers/server.js';

const fault = (severity: string, labels: Record<string, string> = {}) => ({ element_id: 'olt-9', fault_class: 'LOS', root_cause_id: 'cut', severity, labels });
const heavy = Object.fromEntries(Array.from({ length: 63 }, (_, i) => [`l${String(i).padStart(2, '0')}`, 'v'.repeat(4096)]));

test("an arrival's labels are kept in a history within their budget, and say when they were cut", async (t) => {
  const s = await inProcessServer({ store: 'memory' });
  t.after(() => s.stop());
  let key = '';
  for (let i = 0; i < 30; i++) key = (await s.post('/v1/incidents', fault(i % 2 ? 'MAJOR' : 'CRITICAL', heavy))).body.dedup_key;
  const r = await s.app.inject({ method: 'GET', url: `/v1/incidents/${key}/history` });
  assert.equal(r.statusCode, 200);
  const events = (JSON.parse(r.payload) as { events: Array<{ type: string; arrival?: { data: { labels: Record<string, string>; labels_cut?: boolean } } }> })
    .events;
  const arrivals = events.filter((e) => e.arrival);
  assert.equal(arrivals.length, 30, 'every change keeps its arrival');
  for (const e of arrivals) {
    const labels = e.arrival!.data.labels;
    const size = Object.entries(labels).reduce((n, [k, v]) => n + k.length + v.length, 0);
    assert.ok(size <= ARRIVAL_LABEL_CHARS, `${size} label characters kept`);
    assert.equal(e.arrival!.data.labels_cut, true);
    assert.ok(Object.keys(labels).length >= 1, 'what fits is kept, in name order');
    assert.equal(Object.keys(labels)[0], 'l00');
  }
  // 30 changes of 258 KiB of labels each: the answer is bounded by the budget, not by what was sent.
  assert.ok(r.payload.length < 30 * (ARRIVAL_LABEL_CHARS + 4096), `${r.payload.length} bytes`);
  // Labels within the budget are kept whole, without the mark.
  const light = await s.post('/v1/incidents', { ...fault('MAJOR', { team: 'net' }), element_id: 'olt-10' });
  const one = JSON.parse((await s.app.inject({ method: 'GET', url: `/v1/incidents/${light.body.dedup_key}/history` })).payload);
  assert.deepEqual(one.events[0].arrival.data.labels, { team: 'net' });
  assert.equal(one.events[0].arrival.data.labels_cut, undefined);
});

test('GET …/history pages: limit and before walk the whole history, oldest first in each page; a bad page is refused', async (t) => {
  const s = await inProcessServer({ store: 'memory' });
  t.after(() => s.stop());
  let key = '';
  for (let i = 0; i < 12; i++) key = (await s.post('/v1/incidents', fault(i % 2 ? 'MAJOR' : 'CRITICAL'))).body.dedup_key;
  const get = async (query: string) => {
    const r = await s.app.inject({ method: 'GET', url: `/v1/incidents/${key}/history${query}` });
    return { status: r.statusCode, body: JSON.parse(r.payload) };
  };
  const whole = await get('');
  assert.equal(whole.status, 200);
  assert.equal(whole.body.more, undefined, 'the default page holds a whole default-sized history');
  const all = whole.body.events as unknown[];
  assert.ok(all.length >= 12);
  const pages: unknown[][] = [];
  let query = '?limit=5';
  for (;;) {
    const p = await get(query);
    assert.equal(p.status, 200);
    assert.ok(p.body.events.length <= 5);
    pages.unshift(p.body.events);
    if (!p.body.more) break;
    query = `?limit=5&before=${p.body.more.before}`;
  }
  assert.deepEqual(pages.flat(), all, 'the pages put together are the whole history, in order');
  for (const bad of ['?limit=0', '?limit=501', '?limit=x', '?before=-1', '?limit=1.5']) {
    const r = await get(bad);
    assert.equal(r.status, 400, bad);
    assert.equal(r.body.error.code, 'invalid_input');
    assert.match(r.body.error.issues[0].path, /^(limit|before)$/);
  }
});
