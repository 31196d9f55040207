/**
 * Identity text holds nothing that reads as something else: C1 controls and
 * bidirectional controls or line separators in a key, an identity field or
 * a label are refused with the field named, and change nothing; free text
 * (a summary) may keep them, and every CLI printer shows them escaped.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { printable } from '../../src/cli/table.js';
import { inProcessServer } from '../helpers/server.js';

const incident = (over: Record<string, unknown>) => ({ element_id: 'olt-1', fault_class: 'LOS', root_cause_id: 'rc', severity: 'MAJOR', ...over });

test('C1 controls, bidi controls and line separators in identity text are refused, naming the field, and change nothing', async (t) => {
  const s = await inProcessServer({ store: 'memory' });
  t.after(() => s.stop());
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['/v1/incidents', incident({ element_id: 'olt-\u202e1' }), 'element_id'],
    ['/v1/incidents', incident({ fault_class: 'LOS\u0085' }), 'fault_class'],
    ['/v1/incidents', incident({ root_cause_id: 'a\u2028b' }), 'root_cause_id'],
    ['/v1/incidents', incident({ labels: { team: 'net\u2066' } }), 'labels'],
    ['/v1/violations', { process_id: 'p\u009b1', rule_id: 'nelson_1', timestamp: 1, value: 1, center: 0, ucl: 1, lcl: -1 }, 'process_id'],
    [
      '/v1/alertmanager',
      {
        version: '4',
        status: 'firing',
        alerts: [{ status: 'firing', labels: { alertname: 'A\u200fB' }, annotations: {}, startsAt: '2026-12-01T00:00:00Z', fingerprint: 'f1' }],
      },
      'labels',
    ],
  ];
  for (const [url, body, field] of cases) {
    const r = await s.post(url, body);
    assert.equal(r.status, 400, `${url} ${JSON.stringify(body)}`);
    assert.equal(r.body.error.code, 'invalid_input');
    assert.ok(
      (r.body.error.issues as Array<{ path: string; message: string }>).some((i) => i.path.includes(field) && /C1 control|bidirectional/.test(i.message)),
      JSON.stringify(r.body),
    );
  }
  assert.deepEqual(await s.store.queries.listIncidents('default', 10), [], 'nothing was decided');
  // Free text keeps them (a summary in Arabic may hold a bidi mark), and the identity still decides.
  assert.equal((await s.post('/v1/incidents', incident({ summary: 'x\u200fy' }))).status, 200);
});

test('CLI printers show control, bidi and separator characters escaped, never raw', () => {
  assert.equal(printable('a\u001b[2Jb'), 'a\\x1b[2Jb');
  assert.equal(printable('c1\u009bd'), 'c1\\x9bd');
  assert.equal(printable('evil\u202etxt.exe'), 'evil\\u{202e}txt.exe');
  assert.equal(printable('line\u2028break'), 'line\\u{2028}break');
  assert.equal(printable('plain text, ünïcode ✓'), 'plain text, ünïcode ✓');
});
