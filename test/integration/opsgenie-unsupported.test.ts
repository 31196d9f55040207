/**
 * docs/drop-in.md lists the calls of Opsgenie's Alert API that onceonly does
 * not serve, each with its answer. This reads that table and makes every call
 * it names, so the list can neither promise an answer that is not given nor
 * leave a call that answers 2xx and does nothing.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { inProcessServer, type InProcessServer } from '../helpers/server.js';

const doc = readFileSync(new URL('../../docs/drop-in.md', import.meta.url), 'utf8');
const table = /<!-- opsgenie:unsupported begin -->([\s\S]*?)<!-- opsgenie:unsupported end -->/.exec(doc)?.[1] ?? '';

/** Each row: its calls (method and path, `{id}` made an alias) and the status it documents. */
function rows(): Array<{ calls: Array<[string, string]>; status: number; row: string }> {
  return table
    .split('\n')
    .filter((l) => l.startsWith('| `'))
    .map((row) => {
      const [what, answer] = row
        .split('|')
        .slice(1, 3)
        .map((c) => c.trim()) as [string, string];
      const status = Number(/^(\d{3})/.exec(answer)?.[1]);
      const methods = [...what.matchAll(/\b(GET|PUT|POST|DELETE)\b/g)].map((m) => m[1]!);
      const paths = [...what.matchAll(/`(?:(?:GET|PUT|POST|DELETE) )?(\/[^`]*)`/g)].map((m) => m[1]!);
      // "`PUT /v2/alerts/{id}/message`, `/description`": a bare suffix takes the first path's stem.
      const first = paths[0]!;
      const stem = first.slice(0, first.lastIndexOf('/'));
      const full = paths.map((p) => (p.startsWith('/v2/') ? p : `${stem}${p}`));
      const calls = methods.flatMap((m) => full.map((p) => [m, p] as [string, string]));
      return { calls, status, row };
    });
}

let s: InProcessServer;
before(async () => {
  s = await inProcessServer({});
});
after(() => s.stop());

test('the drop-in doc lists the Opsgenie calls not served, and each gets the answer it says', async () => {
  const listed = rows();
  assert.ok(listed.length >= 2, `the table has its rows (${listed.length})`);
  let made = 0;
  for (const { calls, status, row } of listed) {
    assert.ok(calls.length > 0 && status >= 400, `a row names calls and an error status: ${row}`);
    for (const [method, path] of calls) {
      const url = path.replace('{id}', 'some-alias');
      for (const v of [`${url}${url.includes('?') ? '&' : '?'}identifierType=alias`]) {
        const res = await s.app.inject({
          method: method as 'GET',
          url: v,
          headers: { 'content-type': 'application/json' },
          payload: method === 'GET' ? undefined : '{}',
        });
        assert.equal(res.statusCode, status, `${method} ${v}: ${res.payload}`);
        assert.equal(JSON.parse(res.payload).error.code, 'not_found');
        made++;
      }
    }
  }
  assert.ok(made >= listed.length, `every row made at least one call (${made} for ${listed.length} rows)`);
});
