import { test } from 'node:test';
import assert from 'node:assert/strict';
import { escapeField, incidentKey, joinIdentity } from '../../src/core/identity.js';

// Expected keys were computed outside the code under test, with coreutils:
//   printf '%s' 'JOINED' | sha256sum   (first 32 hex characters)
// where JOINED is the escaped join shown in each row.
const vectors: Array<{ id: [string, string, string]; joined: string; key: string }> = [
  // printf '%s' 'a|b|c' | sha256sum
  { id: ['a', 'b', 'c'], joined: 'a|b|c', key: 'dedup:a52dd81bfd5e4e66d96b9f598382f6cb' },
  // printf '%s' 'edge-rtr-01|LINK_DOWN|ring-7' | sha256sum
  { id: ['edge-rtr-01', 'LINK_DOWN', 'ring-7'], joined: 'edge-rtr-01|LINK_DOWN|ring-7', key: 'dedup:66dd1630e033ad3dc78d4776530535b1' },
  // printf '%s' 'a\|b|c|d' | sha256sum
  { id: ['a|b', 'c', 'd'], joined: 'a\\|b|c|d', key: 'dedup:102008bc3eedebde5f19d28fe8e97b6c' },
  // printf '%s' 'a|b\|c|d' | sha256sum
  { id: ['a', 'b|c', 'd'], joined: 'a|b\\|c|d', key: 'dedup:ef0c88f19f3a8c0ba49ca3577dc1e715' },
  // printf '%s' 'a\\|b|c' | sha256sum   (the field is a single backslash after "a")
  { id: ['a\\', 'b', 'c'], joined: 'a\\\\|b|c', key: 'dedup:95119e89b71ac2606fac9a60196e7371' },
  // printf '%s' 'a\\\|b|c|d' | sha256sum   (the field is a, backslash, pipe, b)
  { id: ['a\\|b', 'c', 'd'], joined: 'a\\\\\\|b|c|d', key: 'dedup:a8aa6b9bf910ecf3a1cea42ced94cd48' },
  // printf '%s' 'Zürich-核心-1|光纤中断|⚡root' | sha256sum   (UTF-8 bytes)
  { id: ['Zürich-核心-1', '光纤中断', '⚡root'], joined: 'Zürich-核心-1|光纤中断|⚡root', key: 'dedup:f815cfe61d055c336cb5bfe8ebd664c4' },
];

for (const v of vectors) {
  test(`key of ${JSON.stringify(v.id)}`, () => {
    assert.equal(joinIdentity(v.id), v.joined);
    const [element_id, fault_class, root_cause_id] = v.id;
    assert.equal(incidentKey({ element_id, fault_class, root_cause_id }), v.key);
  });
}

test('a pipe inside a field cannot make two identities collide', () => {
  const k1 = incidentKey({ element_id: 'a|b', fault_class: 'c', root_cause_id: 'd' });
  const k2 = incidentKey({ element_id: 'a', fault_class: 'b|c', root_cause_id: 'd' });
  assert.notEqual(k1, k2);
  // A trailing backslash must not swallow the separator either.
  const k3 = incidentKey({ element_id: 'a\\', fault_class: '|b', root_cause_id: 'c' });
  const k4 = incidentKey({ element_id: 'a', fault_class: '\\|b', root_cause_id: 'c' });
  assert.notEqual(k3, k4);
});

test('escaping writes backslash first, then pipe', () => {
  assert.equal(escapeField('\\|'), '\\\\\\|');
  assert.equal(escapeField('plain'), 'plain');
});
