import { test } from 'node:test';
import assert from 'node:assert/strict';
import { configSchema } from '../../src/config/schema.js';
import { topicMatches } from '../../src/ingest/mqtt.js';

test('topic filters match as MQTT matches them: + one level, # the rest, nothing else', () => {
  const cases: Array<[string, string, boolean]> = [
    ['devices/+/status', 'devices/pos-1/status', true],
    ['devices/+/status', 'devices/pos-1/other', false],
    ['devices/+/status', 'devices/a/b/status', false],
    ['devices/#', 'devices', true],
    ['devices/#', 'devices/a/b/c', true],
    ['devices/#', 'other/a', false],
    ['devices/+', 'devices/', true],
    ['devices', 'devices/x', false],
    ['a/b', 'a/b', true],
  ];
  for (const [filter, topic, want] of cases) assert.equal(topicMatches(filter, topic), want, `${filter} ~ ${topic}`);
});

const parse = (ingest: unknown, tenants: unknown[] = []) => configSchema.safeParse({ ingest, tenants });
const problems = (r: ReturnType<typeof parse>) => (r.success ? [] : r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`));
const mqtt = (over: Record<string, unknown> = {}) => ({ mqtt: { url: 'mqtt://broker:1883', topics: { 'devices/+': 'event' }, ...over } });

test('ingest.mqtt: the defaults, and every bad value refused with the field named', () => {
  const ok = parse(mqtt());
  assert.ok(ok.success);
  assert.deepEqual(
    { qos: ok.data.ingest.mqtt!.qos, group: ok.data.ingest.mqtt!.shared_group, expiry: ok.data.ingest.mqtt!.session_expiry_seconds },
    { qos: 1, group: 'onceonly', expiry: 3600 },
  );
  assert.equal(parse({}).success, true, 'no broker: nothing taken but HTTP');
  const refused: Array<[Record<string, unknown>, RegExp]> = [
    [{ url: 'http://broker' }, /ingest\.mqtt\.url: must be an mqtt:\/\//],
    [{ topics: {} }, /ingest\.mqtt\.topics: name 1 to 64 topic filters/],
    [{ topics: { 'a/#/b': 'event' } }, /must be an MQTT topic filter/],
    [{ topics: { 'a/b+': 'event' } }, /must be an MQTT topic filter/],
    [{ topics: { 'a/b': 'ticket' } }, /must be one of incident, event, violation, alertmanager/],
    [{ qos: 0 }, /ingest\.mqtt\.qos/],
    [{ shared_group: 'a/b' }, /shared_group: must be 1\.\.64 letters/],
    [{ reject_topic: 'rejects/#' }, /reject_topic: must be a topic name/],
    [{ tenant: 'acme' }, /no tenants are configured/],
    [{ extra: 1 }, /ingest\.mqtt: Unrecognized key/],
  ];
  for (const [over, message] of refused) assert.match(problems(parse(mqtt(over))).join('\n'), message, JSON.stringify(over));
  // With tenants, the messages belong to one of them, named.
  const tenants = [{ id: 'acme', tokens: ['a-token-of-sixteen-chars'] }];
  assert.match(problems(parse(mqtt(), tenants)).join('\n'), /ingest\.mqtt\.tenant: required once tenants are configured/);
  assert.match(problems(parse(mqtt({ tenant: 'beta' }), tenants)).join('\n'), /no tenant "beta" is configured/);
  assert.ok(parse(mqtt({ tenant: 'acme' }), tenants).success);
});
