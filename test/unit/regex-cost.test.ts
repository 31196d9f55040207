// needs:
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RE2JS } from 're2js';
import { regexCost } from '../../src/core/regex-cost.js';

/** The program RE2 compiles (re2js's own count of instructions), anchored as a matcher anchors it. */
const compiled = (p: string): number => (RE2JS.compile(`^(?:${p})$`) as unknown as { re2Input: { prog: { numInst(): number } } }).re2Input.prog.numInst();

test('the estimate never undercounts the compiled program, and stays close to it', () => {
  const patterns = [
    'a',
    '(a+)+b',
    '[a-z]{3,10}foo',
    '.*',
    'x{1000}',
    '.{0,1000}',
    '(x{30}){30}',
    'node|api|db',
    '(?i)abc',
    '\\Qa.b.c\\E',
    '[]a]{5}',
    '(?:ab){0,}',
    'a{2,}',
    '\\p{Greek}+x',
    '(?P<n>a|b)c?',
    '[[:alpha:]]{10}',
    '(a{10}|b{20}){5}',
    '[^\\]x]{7}y',
    '\\x{41}{20}',
    '(((a)))',
  ];
  for (const p of patterns) {
    const real = compiled(p);
    const est = regexCost(`^(?:${p})$`);
    assert.ok(est >= real, `${p}: estimate ${est} < compiled ${real}`);
    assert.ok(est <= real * 2 + 10, `${p}: estimate ${est} is far above compiled ${real}`);
  }
});

test('nested and chained repeats multiply and add, as the program does', () => {
  assert.ok(regexCost('.{0,1000}'.repeat(256)) > 500_000);
  assert.ok(regexCost('(?:(?:a{10}){10}){10}') >= 1000);
  assert.ok(regexCost('a{1000}') > regexCost('a{10}') * 50);
});
