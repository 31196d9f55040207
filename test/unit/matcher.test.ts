import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compileMatcher, formatMatcher, MatcherError, matchesAll, parseMatcher } from '../../src/core/matcher.js';

test('the four operators, as Alertmanager means them: whole values, anchored regexes, absent labels are ""', () => {
  const labels = { fault_class: 'LOS', severity: 'MAJOR' };
  const m = (text: string) => parseMatcher(text).test(labels);
  assert.equal(m('fault_class="LOS"'), true);
  assert.equal(m('fault_class="LO"'), false, 'equality is of the whole value');
  assert.equal(m('fault_class!="LOS"'), false);
  assert.equal(m('severity=~"MAJOR|MINOR"'), true);
  assert.equal(m('severity=~"MAJ"'), false, 'a regex is anchored at both ends');
  assert.equal(m('severity!~"MAJOR|MINOR"'), false);
  assert.equal(m('severity!~"CRITICAL"'), true);
  assert.equal(m('element_id=""'), true, 'an absent label is the empty string');
  assert.equal(m('element_id!=""'), false);
  assert.equal(m('element_id=~".*"'), true);
});

test('text form: quoted values with escapes, bare values, spaces around the operator; and back again', () => {
  const q = parseMatcher('summary = "a \\"b\\" \\\\ c"');
  assert.deepEqual([q.name, q.value, q.isRegex, q.isEqual], ['summary', 'a "b" \\ c', false, true]);
  const bare = parseMatcher('fault_class=LOS');
  assert.equal(bare.value, 'LOS');
  assert.equal(formatMatcher(parseMatcher('severity!~"MAJOR|MINOR"')), 'severity!~"MAJOR|MINOR"');
  assert.equal(parseMatcher(formatMatcher(q)).value, q.value, 'formatting round-trips');
});

test('bad matchers are refused with a reason', () => {
  for (const [text, why] of [
    ['="x"', /label name/],
    ['fault_class', /no operator/],
    ['fault_class=="x"', /must be double-quoted|text after/],
    ['fault_class="x', /not closed/],
    ['fault_class="x" y', /text after/],
    ['fault_class="\\q"', /unknown escape/],
    ['severity=~"(MAJOR"', /missing closing/],
    ['fault_class=a b', /double-quoted/],
  ] as const) {
    assert.throws(
      () => parseMatcher(text),
      (e: Error) => e instanceof MatcherError && why.test(e.message),
      text,
    );
  }
  assert.throws(() => compileMatcher({ name: 'bad-name', value: 'x', isRegex: false, isEqual: true }), MatcherError);
});

test('a regex that backtracks exponentially in JavaScript runs in linear time (RE2)', () => {
  const m = compileMatcher({ name: 'summary', value: '(a+)+b', isRegex: true, isEqual: true });
  // JavaScript's own engine would not return on this input (2^100000 paths): this test would hang, not fail.
  assert.equal(m.test({ summary: 'a'.repeat(100_000) }), false);
});

test('matchesAll is the AND of the list', () => {
  const ms = [parseMatcher('fault_class="LOS"'), parseMatcher('severity=~"MAJOR|MINOR"')];
  assert.equal(matchesAll(ms, { fault_class: 'LOS', severity: 'MINOR' }), true);
  assert.equal(matchesAll(ms, { fault_class: 'LOS', severity: 'CRITICAL' }), false);
});

// Planted fault it catches: reading a label as `labels[name]`, which finds what every object inherits.
test('a label named as an inherited property (constructor, toString, __proto__) is absent unless the labels hold it', () => {
  for (const name of ['constructor', 'toString', 'hasOwnProperty', 'valueOf', '__proto__']) {
    assert.equal(parseMatcher(`${name}=""`).test({}), true, `${name}="" matches labels without it`);
    assert.equal(parseMatcher(`${name}=~".+"`).test({}), false, `${name}=~".+" does not`);
    assert.equal(parseMatcher(`${name}!=""`).test({}), false);
  }
  assert.equal(parseMatcher('constructor="x"').test({ constructor: 'x' } as Record<string, string>), true, 'one it holds is read');
});
