// needs:
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { maskSecrets } from '../../src/config/secret-refs.js';

const secrets = [{ path: 'maintenance.0.matchers.0', value: 'env-s3cret-value' }];

test('a secret value is masked wherever it appears, also as JSON escapes it', () => {
  const quoting = [{ path: 'a', value: 'pa"ss\\word' }];
  assert.equal(maskSecrets('value env-s3cret-value is bad', secrets), 'value *** is bad');
  assert.equal(maskSecrets('got "pa\\"ss\\\\word" here', quoting), 'got "***" here');
});

test('at a path a secret fed, every quoted span is masked (what the message quotes may be derived from it)', () => {
  const at = 'maintenance.0.matchers.0';
  assert.equal(maskSecrets('matcher "olt=x" is not valid: `x` unknown', secrets, at), 'matcher "***" is not valid: "***" unknown');
  assert.equal(maskSecrets("unknown label 'site_secret' in the matcher", secrets, at), 'unknown label "***" in the matcher');
  assert.equal(maskSecrets('matcher "olt=x" is not valid', secrets, 'tenants.0'), 'matcher "olt=x" is not valid', 'another path is left alone');
});

// Planted fault it catches: any two apostrophes taken as a quoted span.
test("apostrophes inside words are not quotes: the message's own words stay readable", () => {
  const at = 'maintenance.0.matchers.0';
  assert.equal(
    maskSecrets("can't parse 'site_secret' as a matcher; it doesn't name a label", secrets, at),
    'can\'t parse "***" as a matcher; it doesn\'t name a label',
  );
  assert.equal(maskSecrets("the zone isn't known, and it wasn't given", secrets, at), "the zone isn't known, and it wasn't given");
});
