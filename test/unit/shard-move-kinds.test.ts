/**
 * Every kind of key the Redis layout builds is either carried by a shard
 * move (`recordOf` names its record, and that record's keys include it) or
 * declared as staying, with its reason. The keys are found by calling every
 * builder the layout has, so a builder added later is checked without
 * anyone listing it here.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { adoptedKey, deliveryKeys, historyTallyKeys, keyLayout, type KeyLayout, movedKey, orderKey } from '../../src/store/redis/keys.js';
import { recordOf, STAYING } from '../../src/store/redis/reshard.js';

/**
 * Parts that break naive parsing: colons, dots, digits after a dot, non-ASCII
 * (byte and character lengths differ). The first is always a tenant or an
 * adapter name, so it is a valid tenant id: no colon (access/tenants.ts),
 * which the colon-joined kinds (`i`, `k`, `e`, `c`, `w`, `r`) rely on.
 */
const PARTS = ['ten.a_nt-1', 'k:é:2.x', 'b:3', '7'];

/** Every `{oo:S}` key in what a builder answers (a string, an object of them, nested). */
function keysIn(value: unknown, out: string[] = []): string[] {
  // A bare hash tag (`{oo:3}`) is not a key.
  if (typeof value === 'string' && /^\{oo:\d+\}:/.test(value)) out.push(value);
  else if (Array.isArray(value)) for (const v of value) keysIn(v, out);
  else if (value && typeof value === 'object') for (const v of Object.values(value)) keysIn(v, out);
  return out;
}

/** Calls every function of the layout (and of its nested objects) with PARTS as its arguments. */
function everyKey(layout: KeyLayout): string[] {
  const out: string[] = [];
  const visit = (o: object) => {
    for (const name of Object.keys(o)) {
      if (name === 'moveTo' || name === 'settled' || name === 'previous') continue;
      const v = (o as Record<string, unknown>)[name];
      if (typeof v === 'function') {
        if (name === 'allShards') for (const kind of ['o', 'f', 'lv', 'ti', 'tl'] as const) keysIn(layout.allShards(kind), out);
        else if (name === 'tenantIndexes') for (const kind of ['ti', 'tf'] as const) keysIn(layout.tenantIndexes(kind, PARTS[0]!), out);
        else keysIn((v as (...a: unknown[]) => unknown)(...PARTS.slice(0, v.length)), out);
      } else if (v && typeof v === 'object') visit(v);
    }
  };
  visit(layout);
  return out;
}

const kindOf = (key: string) => /^\{oo:\d+\}:([a-z]+)(?::|$)/.exec(key)?.[1] ?? `(no kind: ${key})`;

// Planted fault it catches: a record kind the move forgets (flap lists were, once), or a parse that is not the build's inverse.
test('every key kind the layout builds is carried by a shard move with its own record, or stays for a stated reason', () => {
  const layout = keyLayout(7);
  const d = deliveryKeys(3);
  const built = [
    ...everyKey(layout),
    ...keysIn({ ...d, delivery: d.delivery('1-0.jira') }),
    orderKey(2, 'jira', 'incident', PARTS[0]!, PARTS[1]!),
    movedKey(1, 4),
    adoptedKey(layout.incidentRecordKey(PARTS[0]!, PARTS[1]!)),
    ...historyTallyKeys(layout.historyKey(PARTS[0]!, PARTS[1]!), PARTS[0]!),
  ];
  const kinds = new Set(built.map(kindOf));
  assert.ok(kinds.size >= 25, `the builders were found (${[...kinds].join(' ')})`);
  const wrong: string[] = [];
  for (const key of built) {
    const kind = kindOf(key);
    const r = recordOf(layout, key);
    if (r === null) {
      if (!(kind in STAYING)) wrong.push(`${key}: kind ${kind} is neither carried nor declared as staying`);
    } else if (!r.set.keys(layout).some(([k]) => k === key)) {
      wrong.push(`${key}: carried as a ${r.kind}, whose keys do not include it (the parse is not the build's inverse)`);
    } else if (kind in STAYING) wrong.push(`${key}: kind ${kind} is carried and declared as staying`);
  }
  assert.deepEqual(wrong, []);
  for (const kind of Object.keys(STAYING)) assert.ok(kinds.has(kind), `STAYING names ${kind}, which the layout no longer builds`);
});

test('a key the move does not know is not carried: the check above can fail', () => {
  const layout = keyLayout(7);
  assert.equal(recordOf(layout, '{oo:3}:zz:5.ten:1.k'), null);
  assert.ok(!('zz' in STAYING));
  // A carried key whose parts were mangled names another record, whose keys do not include it.
  const key = layout.flapKey('tenant', 'key');
  const mangled = key.replace('6.tenant', '6.tenanT');
  const r = recordOf(layout, mangled);
  assert.ok(r && !r.set.keys(layout).some(([k]) => k === key));
});
