import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { inProcessServer, type InProcessServer } from '../helpers/server.js';

const good = { element_id: 'e', fault_class: 'f', root_cause_id: 'r', severity: 'MAJOR' };
const json = (v: unknown) => JSON.stringify(v);

interface Case {
  name: string;
  body: string;
  contentType?: string;
  status: number;
  code: string;
  /** a path that must appear among the issues */
  path?: string;
}

const cases: Case[] = [
  { name: 'missing element_id', body: json({ ...good, element_id: undefined }), status: 400, code: 'invalid_input', path: 'element_id' },
  { name: 'empty element_id', body: json({ ...good, element_id: '' }), status: 400, code: 'invalid_input', path: 'element_id' },
  { name: 'numeric element_id', body: json({ ...good, element_id: 7 }), status: 400, code: 'invalid_input', path: 'element_id' },
  { name: 'element_id over 512 chars', body: json({ ...good, element_id: 'x'.repeat(513) }), status: 400, code: 'invalid_input', path: 'element_id' },
  { name: 'null fault_class', body: json({ ...good, fault_class: null }), status: 400, code: 'invalid_input', path: 'fault_class' },
  { name: 'empty fault_class', body: json({ ...good, fault_class: '' }), status: 400, code: 'invalid_input', path: 'fault_class' },
  { name: 'missing root_cause_id', body: json({ ...good, root_cause_id: undefined }), status: 400, code: 'invalid_input', path: 'root_cause_id' },
  { name: 'unknown severity', body: json({ ...good, severity: 'LOUD' }), status: 400, code: 'invalid_input', path: 'severity' },
  { name: 'lower-case severity', body: json({ ...good, severity: 'major' }), status: 400, code: 'invalid_input', path: 'severity' },
  { name: 'missing severity', body: json({ ...good, severity: undefined }), status: 400, code: 'invalid_input', path: 'severity' },
  { name: 'cleared as a string', body: json({ ...good, cleared: 'true' }), status: 400, code: 'invalid_input', path: 'cleared' },
  { name: 'unknown extra field', body: json({ ...good, priority: 1 }), status: 400, code: 'invalid_input', path: 'priority' },
  { name: 'details not an object', body: json({ ...good, details: 'x' }), status: 400, code: 'invalid_input', path: 'details' },
  { name: 'summary not a string', body: json({ ...good, summary: 5 }), status: 400, code: 'invalid_input', path: 'summary' },
  { name: 'labels not an object', body: json({ ...good, labels: ['team=net'] }), status: 400, code: 'invalid_input', path: 'labels' },
  { name: 'a label value not a string', body: json({ ...good, labels: { team: 7 } }), status: 400, code: 'invalid_input', path: 'labels.team' },
  {
    name: 'a label value over 4,096 chars',
    body: json({ ...good, labels: { team: 'x'.repeat(4097) } }),
    status: 400,
    code: 'invalid_input',
    path: 'labels.team',
  },
  {
    name: 'a label value with a control character',
    body: json({ ...good, labels: { team: 'a\u0000b' } }),
    status: 400,
    code: 'invalid_input',
    path: 'labels.team',
  },
  { name: 'a label name starting with a digit', body: json({ ...good, labels: { '1team': 'net' } }), status: 400, code: 'invalid_input', path: 'labels' },
  { name: 'a label name with a dash', body: json({ ...good, labels: { 'team-name': 'net' } }), status: 400, code: 'invalid_input', path: 'labels' },
  {
    name: 'a label name over 256 chars',
    body: json({ ...good, labels: { [`a${'b'.repeat(256)}`]: 'x' } }),
    status: 400,
    code: 'invalid_input',
    path: 'labels',
  },
  {
    name: '65 labels',
    body: json({ ...good, labels: Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`l${i}`, 'v'])) }),
    status: 400,
    code: 'invalid_input',
    path: 'labels',
  },
  { name: 'an array', body: json([good]), status: 400, code: 'invalid_input', path: '' },
  { name: 'null', body: 'null', status: 400, code: 'invalid_input', path: '' },
  { name: 'a JSON string', body: json('hello'), status: 400, code: 'invalid_input', path: '' },
  { name: 'truncated JSON', body: '{"element_id": "e", "fault_cl', status: 400, code: 'invalid_input', path: '' },
  { name: 'empty body', body: '', status: 400, code: 'invalid_input', path: '' },
  { name: 'over 512 KiB', body: json({ ...good, summary: 'x'.repeat(600 * 1024) }), status: 413, code: 'payload_too_large' },
  { name: 'text/plain', body: json(good), contentType: 'text/plain', status: 415, code: 'unsupported_media_type' },
  { name: 'form encoded', body: 'element_id=e', contentType: 'application/x-www-form-urlencoded', status: 415, code: 'unsupported_media_type' },
];

describe('HTTP: every malformed incident gets a clear error and changes nothing', () => {
  let s: InProcessServer;
  before(async () => {
    s = await inProcessServer();
  });
  after(() => s.stop());

  for (const c of cases) {
    test(c.name, async () => {
      const res = await s.app.inject({
        method: 'POST',
        url: '/v1/incidents',
        headers: { 'content-type': c.contentType ?? 'application/json' },
        payload: c.body,
      });
      assert.equal(res.statusCode, c.status, res.payload);
      assert.equal(res.headers['content-type']?.toString().startsWith('application/json'), true);
      const body = res.json();
      assert.equal(body.error.code, c.code);
      assert.equal(typeof body.error.message, 'string');
      assert.ok(body.error.message.length > 0);
      if (c.path !== undefined) {
        const paths = (body.error.issues as Array<{ path: string }>).map((i) => i.path);
        assert.ok(paths.includes(c.path), `issues ${JSON.stringify(body.error.issues)} should name ${JSON.stringify(c.path)}`);
        if (c.path !== '') assert.ok(body.error.message.includes(c.path), `message names the field: ${body.error.message}`);
      }
    });
  }

  test('afterwards nothing was stored, and every refusal was counted', async () => {
    const metrics = (await s.app.inject({ url: '/metrics' })).payload;
    assert.match(metrics, /onceonly_incidents_live 0/);
    assert.doesNotMatch(metrics, /onceonly_incident_decisions_total\{[^}]*\} [1-9]/);
    const rejected = [...metrics.matchAll(/onceonly_requests_rejected_total\{route="\/v1\/incidents",code="[a-z_]+"\} (\d+)/g)]
      .map((m) => Number(m[1]))
      .reduce((a, b) => a + b, 0);
    assert.equal(rejected, cases.length);
    // And the good body still works afterwards.
    assert.equal((await s.post('/v1/incidents', good)).body.decision, 'CREATE');
  });
});

describe('HTTP: validation messages speak the API, one per field', () => {
  let s: InProcessServer;
  before(async () => {
    s = await inProcessServer();
  });
  after(() => s.stop());

  const bodies: Record<string, Record<string, unknown>> = {
    '/v1/incidents': good,
    '/v1/violations': { process_id: 'p', rule_id: 'WE1', timestamp: 1_700_000_000, value: 1, center: 0, ucl: 3, lcl: -3 },
    '/v1/events': { tenant_id: 't', device_id: 'd', boot_id: 'b', sequence: 1, state: 'UP', observed_at: '2026-01-01T00:00:00Z' },
  };
  // Each wrong in a way a broken producer sends: missing, wrong type, empty, absurd.
  const BAD: unknown[] = [undefined, null, -1, 1.5, 'x', '', [], {}, true, 1e300, 'a'.repeat(5000)];
  const TYPES: Record<string, string> = {
    number: 'a number',
    boolean: 'true or false',
    object: 'an object',
    array: 'an array',
    null: 'null',
    string: 'a string',
  };
  const typeOf = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);

  test('no schema-library wording reaches a producer; a field is reported once; missing is "required"; a wrong type names both types', async () => {
    let refused = 0;
    for (const [url, base] of Object.entries(bodies)) {
      for (const field of Object.keys(base)) {
        for (const bad of BAD) {
          const res = await s.app.inject({ method: 'POST', url, payload: { ...base, [field]: bad } });
          if (res.statusCode !== 400) continue;
          refused++;
          const { message, issues } = res.json().error as { message: string; issues: Array<{ path: string; message: string }> };
          const where = `${url} ${field}=${JSON.stringify(bad)?.slice(0, 20)}: ${JSON.stringify(issues)}`;
          for (const text of [message, ...issues.map((i) => i.message)]) assert.doesNotMatch(text, /Invalid input|expected \w+, received/, where);
          const paths = issues.map((i) => i.path);
          assert.equal(new Set(paths).size, paths.length, `each field once: ${where}`);
          const mine = issues.find((i) => i.path === field);
          assert.ok(mine, `the field is named: ${where}`);
          if (bad === undefined) assert.equal(mine.message, 'required', where);
          else if (typeof base[field] === 'string' && typeof bad !== 'string' && !mine.message.startsWith('must be one of '))
            assert.equal(mine.message, `must be a string, not ${TYPES[typeOf(bad)]}`, where);
        }
      }
    }
    assert.ok(refused > 50, `enough refusals to mean something: ${refused}`);
  });

  test('a body that is not an object says so in words', async () => {
    const res = await s.app.inject({ method: 'POST', url: '/v1/incidents', payload: [good] });
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().error.message, 'invalid incident: the body must be an object, not an array');
  });
});
