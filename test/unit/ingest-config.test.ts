import { test } from 'node:test';
import assert from 'node:assert/strict';
import { configSchema } from '../../src/config/schema.js';
import { topicMatches } from '../../src/ingest/mqtt.js';
import { subjectMatches } from '../../src/ingest/nats.js';

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

test('subject filters match as NATS matches them: * one token, > one or more', () => {
  const cases: Array<[string, string, boolean]> = [
    ['fleet.*.status', 'fleet.pos-1.status', true],
    ['fleet.*.status', 'fleet.a.b.status', false],
    ['fleet.>', 'fleet.a', true],
    ['fleet.>', 'fleet.a.b.c', true],
    ['fleet.>', 'fleet', false],
    ['faults', 'faults', true],
    ['faults', 'faults.x', false],
  ];
  for (const [filter, subject, want] of cases) assert.equal(subjectMatches(filter, subject), want, `${filter} ~ ${subject}`);
});

const nats = (over: Record<string, unknown> = {}) => ({
  nats: { url: 'nats://127.0.0.1:4222', stream: 'FAULTS', subjects: { 'faults.>': 'incident' }, ...over },
});

test('ingest.nats: the defaults, and every bad value refused with the field named', () => {
  const ok = parse(nats());
  assert.ok(ok.success);
  const n = ok.data.ingest.nats!;
  assert.deepEqual([n.consumer, n.create, n.max_ack_pending, n.ack_wait_seconds, n.nak_delay_ms, n.batch], ['onceonly', true, 1000, 30, 1000, 100]);
  const refused: Array<[Record<string, unknown>, RegExp]> = [
    [{ url: 'http://x' }, /ingest\.nats\.url: must be a nats:\/\/ or tls:\/\/ URL/],
    [{ stream: 'a.b' }, /ingest\.nats\.stream: must be 1\.\.64 letters/],
    [{ subjects: { 'a.>.b': 'incident' } }, /must be a NATS subject filter/],
    [{ subjects: { 'a b': 'incident' } }, /must be a NATS subject filter/],
    [{ subjects: {} }, /name 1 to 64 subject filters/],
    [{ max_ack_pending: 0 }, /ingest\.nats\.max_ack_pending/],
    [{ batch: 5000 }, /ingest\.nats\.batch/],
    [{ reject_subject: 'rejects.*' }, /reject_subject: must be a subject/],
    [{ tenant: 'acme' }, /ingest\.nats\.tenant: no tenants are configured/],
  ];
  for (const [over, message] of refused) assert.match(problems(parse(nats(over))).join('\n'), message, JSON.stringify(over));
  const tenants = [{ id: 'acme', tokens: ['a-token-of-sixteen-chars'] }];
  assert.match(problems(parse(nats(), tenants)).join('\n'), /ingest\.nats\.tenant: required once tenants are configured/);
  assert.ok(parse(nats({ tenant: 'acme' }), tenants).success);
});

test('a reject subject or topic that one of the ingest’s own filters takes back is refused at load, naming it', () => {
  const nats = (reject: string) => ({
    nats: { url: 'nats://127.0.0.1:4222', stream: 'S', subjects: { 'alerts.>': 'incident', 'other.x': 'event' }, reject_subject: reject },
  });
  assert.match(problems(parse(nats('alerts.rejected'))).join('\n'), /ingest\.nats\.reject_subject: the filter "alerts\.>" takes "alerts\.rejected" back/);
  assert.match(
    problems(parse(mqtt({ reject_topic: 'devices/rejected' }))).join('\n'),
    /ingest\.mqtt\.reject_topic: the filter "devices\/\+" takes "devices\/rejected" back/,
  );
  assert.ok(parse(nats('rejects.alerts')).success, 'a subject no filter reads is fine');
  assert.ok(parse(mqtt({ reject_topic: 'rejects/devices' })).success);
});
