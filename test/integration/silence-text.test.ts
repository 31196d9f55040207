import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { formatSilences } from '../../src/cli/silences.js';
import { inProcessServer, type InProcessServer } from '../helpers/server.js';

/**
 * A silence's createdBy and comment keep the text rules of every other field:
 * no control characters (a comment may break lines), no lone surrogates, no
 * NUL. A lone surrogate once made a silence on Redis impossible to expire, and
 * an ESC sequence in a comment acted on the operator's terminal in
 * `onceonly silence list`; now they are refused (400, nothing stored), and
 * the CLI shows stored control characters escaped.
 */
let s: InProcessServer;
before(async () => {
  s = await inProcessServer({ store: 'memory' });
});
after(() => s?.stop());

const silence = (createdBy: string, comment: string) => ({
  matchers: [{ name: 'element_id', value: 'olt-1', isRegex: false, isEqual: true }],
  startsAt: new Date(s.clock.now()).toISOString(),
  endsAt: new Date(s.clock.now() + 3_600_000).toISOString(),
  createdBy,
  comment,
});

test('control characters and lone surrogates in createdBy or comment are refused, naming the field; nothing is stored', async () => {
  for (const [createdBy, comment, field] of [
    ['noc\ud800', 'planned work', 'createdBy'],
    ['noc\u0000', 'planned work', 'createdBy'],
    ['noc\u001b[2J', 'planned work', 'createdBy'],
    ['noc', 'planned \u001b]0;pwned\u0007 work', 'comment'],
    ['noc', 'a lone \udc00 surrogate', 'comment'],
    ['noc', 'NUL\u0000', 'comment'],
  ] as const) {
    const r = await s.post('/api/v2/silences', silence(createdBy, comment));
    assert.equal(r.status, 400, `${JSON.stringify([createdBy, comment])}: ${JSON.stringify(r.body)}`);
    assert.equal(r.body.error.code, 'invalid_input');
    assert.match(JSON.stringify(r.body.error), new RegExp(field));
  }
  assert.deepEqual((await s.get('/api/v2/silences')).body, [], 'nothing was stored');
  const ok = await s.post('/api/v2/silences', silence('noc', 'line one\nline two\twith a tab'));
  assert.equal(ok.status, 200, 'a comment may break lines and hold tabs');
});

test('a silence holds at most 16,384 characters of matchers, createdBy and comment together; past that it is refused and not stored', async () => {
  const before = (await s.get('/api/v2/silences')).body.length;
  const r = await s.post('/api/v2/silences', {
    ...silence('noc', 'c'.repeat(4096)),
    matchers: Array.from({ length: 4 }, (_, i) => ({ name: `l${i}`, value: 'v'.repeat(4096), isRegex: false, isEqual: true })),
  });
  assert.equal(r.status, 400, JSON.stringify(r.body));
  assert.match(r.body.error.message, /at most 16384 characters of matchers, createdBy and comment together \(limits\.silence_chars\)/);
  assert.equal((await s.get('/api/v2/silences')).body.length, before, 'nothing was stored');
});

test('the CLI shows stored control characters escaped, never raw', () => {
  const out = formatSilences([
    {
      id: 'abc',
      matchers: [{ name: 'element_id', value: 'olt-1', isRegex: false, isEqual: true }],
      status: { state: 'active' },
      startsAt: '2026-01-01T00:00:00Z',
      endsAt: '2026-01-01T01:00:00Z',
      updatedAt: '2026-01-01T00:00:00Z',
      createdBy: 'noc\u001b[2J',
      comment: 'two\nlines \u009b31m',
    },
  ] as never);
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is what the check is for.
  assert.doesNotMatch(out, /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/, 'no raw control character reaches the terminal');
  assert.equal(out.split('\n').length, 2, 'a line break in a comment does not forge a row');
  assert.match(out, /noc\\x1b\[2J/);
  assert.match(out, /two\\x0alines \\x9b31m/);
});
