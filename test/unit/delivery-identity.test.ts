import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { deliveryIdentity, pagerdutyDedupKey } from '../../src/delivery/identity.js';

test('delivery identity: the default tenant keeps its keys; every other tenant, and a default key holding a /, is prefixed', () => {
  const key = `dedup:${'e2'.repeat(16)}`;
  assert.equal(deliveryIdentity('default', key), key);
  assert.equal(deliveryIdentity('acme', key), `acme/${key}`);
  // A default device named like another tenant's prefix cannot collide with that tenant's device.
  assert.notEqual(deliveryIdentity('default', 'acme/t-1'), deliveryIdentity('acme', 't-1'));
  assert.equal(deliveryIdentity('default', 'acme/t-1'), 'default/acme/t-1');
});

test('PagerDuty dedup_key: at most 255 characters; a longer identity is its SHA-256, the same every time', () => {
  const long = `pd:${'x'.repeat(255)}`;
  const expected = `onceonly-sha256-${createHash('sha256').update(`acme/${long}`).digest('hex')}`;
  assert.equal(pagerdutyDedupKey('acme', long), expected);
  assert.ok(expected.length <= 255);
  assert.equal(pagerdutyDedupKey('acme', 'pd:disk-full'), 'acme/pd:disk-full');
});
