import { origin } from '../http.js';
import { z } from 'zod';
import { connect, type MqttClient } from 'mqtt';
import type { Adapter } from '../adapter.js';
import type { OutboxEntry, OutboxKind } from '../../core/outbox.js';
import { kindsOf, wireBody, type AdapterDeps } from './common.js';
import { adapterBase, registerAdapterConfig } from '../../config/adapters.js';

export const mqttConfig = registerAdapterConfig(
  adapterBase.extend({
    type: z.literal('mqtt'),
    url: z.url({ protocol: /^(mqtt|mqtts|ws|wss)$/, message: 'must be an mqtt://, mqtts://, ws:// or wss:// URL' }).default('mqtt://127.0.0.1:1883'),
    /**
     * Where each entry goes: {tenant}, {kind}, {key}, {action} and {data.FIELD}
     * are filled in (a `/`, `+` or `#` inside a value becomes `_`). Unset, each
     * kind has its own (DEFAULT_TOPICS), so that every key keeps its own
     * retained message.
     */
    topic: z.string().min(1).optional(),
    qos: z.union([z.literal(0), z.literal(1), z.literal(2)]).default(1),
    /** retained: the topic holds the latest state, which a late subscriber (the historian) reads at once */
    retain: z.boolean().default(true),
    username: z.string().optional(),
    password: z.string().optional(),
  }),
);
export type MqttConfig = z.output<typeof mqttConfig>;

declare module '../../config/adapters.js' {
  interface AdapterConfigs {
    mqtt: MqttConfig;
  }
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is one of the characters a topic may not hold, so it is replaced on purpose.
const clean = (v: unknown) => String(v ?? '').replace(/[/+#\u0000]/g, '_') || '_';

/**
 * The topic of each kind when none is configured: one per key, as a retained
 * message is the key's state and a shared topic would keep only the last
 * key's. Violations go per process and rule (the MES / historian write-back of
 * SPC alarms; a rule's windows share it, the latest window standing), device
 * events per device, incidents and groups per key.
 */
export const DEFAULT_TOPICS: Record<OutboxKind, string> = {
  violation: 'onceonly/violation/{tenant}/{data.process_id}/{data.rule_id}',
  event: 'onceonly/event/{tenant}/{data.device_id}',
  incident: 'onceonly/incident/{tenant}/{key}',
  group: 'onceonly/group/{tenant}/{key}',
};

/** The topic for one entry; `{data.x}` missing from the entry becomes `_`. */
export function topicFor(template: string, e: OutboxEntry): string {
  return template.replace(/\{(tenant|kind|key|action|data\.([A-Za-z0-9_]+))\}/g, (_, name: string, field?: string) =>
    clean(field ? e.data[field] : e[name as 'tenant' | 'kind' | 'key' | 'action']),
  );
}

/**
 * MES / historian write-back: publish the entry (QoS 1 by default, retained)
 * to a topic per process and rule. The topic is the key's upsert: a repeat
 * rewrites the same retained state.
 */
export function mqttAdapter(c: MqttConfig, _deps: AdapterDeps): Adapter {
  const kinds = kindsOf(c.kinds, ['violation', 'event']);
  let client: MqttClient | null = null;
  const open = () =>
    (client ??= connect(c.url, {
      clientId: `onceonly-${c.name}-${process.pid}-${Math.random().toString(16).slice(2, 8)}`,
      reconnectPeriod: 1000,
      connectTimeout: c.timeout_ms,
      ...(c.username ? { username: c.username, password: c.password } : {}),
    }).on('error', () => {
      // Connection errors surface as failed publishes (retried); the client reconnects by itself.
    }));
  return {
    name: c.name,
    type: c.type,
    accepts: (e) => kinds.has(e.kind),
    async deliver(job) {
      const topic = topicFor(c.topic ?? DEFAULT_TOPICS[job.entry.kind], job.entry);
      const payload = JSON.stringify({ ...wireBody(job.entry), idempotency_key: job.idempotencyKey, at: new Date(job.entry.at).toISOString() });
      const mq = open();
      let timer: NodeJS.Timeout | undefined;
      try {
        await Promise.race([
          mq.publishAsync(topic, payload, { qos: c.qos, retain: c.retain }),
          new Promise((_, reject) => {
            timer = setTimeout(
              () => reject(new Error(`no PUBACK from ${origin(c.url)} within ${c.timeout_ms} ms${mq.connected ? '' : ' (not connected)'}`)),
              c.timeout_ms,
            );
          }),
        ]);
        return { ok: true, detail: topic };
      } catch (err) {
        return { ok: false, retryable: true, reason: 'network', error: `publish to ${topic}: ${(err as Error).message}` };
      } finally {
        clearTimeout(timer);
      }
    },
    async close() {
      await client?.endAsync(true).catch(() => {});
      client = null;
    },
  };
}
