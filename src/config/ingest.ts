import { z } from 'zod';

/** What a message on a topic is: the body of the HTTP route of that kind. */
export const INGEST_KINDS = ['incident', 'event', 'violation', 'alertmanager'] as const;
export type IngestKind = (typeof INGEST_KINDS)[number];

/** An MQTT topic filter: levels of characters but the wildcards, `+` as a whole level, `#` only as the last. */
const TOPIC_FILTER = /^(?:(?:[^+#/]*|\+)\/)*(?:[^+#/]*|\+|#)$/;

/** A NATS subject filter: tokens, `*` a whole token, `>` only last. */
const SUBJECT_FILTER = /^(?:(?:[^\s.*>]+|\*)\.)*(?:[^\s.*>]+|\*|>)$/;
const NATS_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** Whether a NATS subject filter (`*` one token, `>` the rest) matches a subject. */
export function subjectMatches(filter: string, subject: string): boolean {
  const f = filter.split('.');
  const t = subject.split('.');
  for (let i = 0; i < f.length; i++) {
    if (f[i] === '>') return t.length > i;
    if (i >= t.length) return false;
    if (f[i] !== '*' && f[i] !== t[i]) return false;
  }
  return f.length === t.length;
}

/** Whether an MQTT topic filter (`+` one level, `#` the rest) matches a topic name. */
export function topicMatches(filter: string, topic: string): boolean {
  const f = filter.split('/');
  const t = topic.split('/');
  for (let i = 0; i < f.length; i++) {
    if (f[i] === '#') return true;
    if (i >= t.length) return false;
    if (f[i] !== '+' && f[i] !== t[i]) return false;
  }
  return f.length === t.length;
}

/** Filter → kind, checked as a whole so every bad filter is named. */
const filterMap = (what: string, valid: (f: string) => boolean, rule: string) =>
  z.record(z.string(), z.enum(INGEST_KINDS, { message: `must be one of ${INGEST_KINDS.join(', ')}` })).superRefine((t, ctx) => {
    const filters = Object.keys(t);
    if (filters.length < 1 || filters.length > 64) ctx.addIssue({ code: 'custom', message: `name 1 to 64 ${what}` });
    for (const f of filters) if (f.length < 1 || f.length > 256 || !valid(f)) ctx.addIssue({ code: 'custom', path: [f], message: rule });
  });

/**
 * Inputs taken from an MQTT broker instead of HTTP (docs/ingest.md). Every
 * replica subscribes to each filter through the MQTT 5 shared subscription
 * `$share/<shared_group>/<filter>`, so the broker gives each message to one
 * of them; a message is acknowledged (PUBACK) only once its decision is
 * durable. Read at start.
 */
export const mqttIngestConfig = z.strictObject({
  url: z.url({ protocol: /^(mqtt|mqtts|ws|wss)$/, message: 'must be an mqtt://, mqtts://, ws:// or wss:// URL' }),
  /** topic filter → what its messages are */
  topics: filterMap(
    'topic filters',
    (f) => TOPIC_FILTER.test(f) && !f.startsWith('$'),
    'must be an MQTT topic filter of at most 256 characters (+ a whole level, # only last), without $share/',
  ),
  /** QoS 1: at least once, acknowledged after the decision. (QoS 0 could lose a message; 2 adds nothing a decision needs.) */
  qos: z.literal(1).default(1),
  /** the shared subscription's group: replicas in one group split the messages */
  shared_group: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1..64 letters, digits, _ or -')
    .default('onceonly'),
  /**
   * The client id: keep one per replica, stable across restarts, so the
   * broker keeps its session (messages taken but not yet acknowledged are
   * sent again when it reconnects). Default: onceonly- and the host's name.
   */
  client_id: z
    .string()
    .regex(/^[A-Za-z0-9_.-]{1,128}$/, 'must be 1..128 letters, digits, _, . or -')
    .optional(),
  /** how long the broker keeps the session of a replica that is away */
  session_expiry_seconds: z.number().int().min(0).max(4_294_967_295).default(3600),
  /** the tenant the inputs belong to (a device event names its own, which must be this one when tenants are configured) */
  tenant: z.string().min(1).optional(),
  /** where a message that is refused (not valid input) is published again, with the reason as the user property `onceonly-reason` */
  reject_topic: z
    .string()
    .min(1)
    .max(256)
    .regex(/^[^+#]+$/, 'must be a topic name (no wildcards)')
    .optional(),
  username: z.string().min(1).optional(),
  password: z.string().min(1).optional(),
});
export type MqttIngestConfig = z.output<typeof mqttIngestConfig>;

/**
 * Inputs taken from a NATS JetStream stream (docs/ingest.md): one durable
 * pull consumer that every replica pulls from, so each message goes to one
 * of them; a message is acknowledged only once its decision is durable, and
 * a replica failing open on a shared store stops pulling, so the stream
 * keeps what the store cannot yet take. Read at start.
 */
export const natsIngestConfig = z.strictObject({
  url: z.string().regex(/^(?:nats|tls):\/\/\S+$/, 'must be a nats:// or tls:// URL'),
  /** the stream; made (with `subjects`) when `create` and it does not exist */
  stream: z.string().regex(NATS_NAME, 'must be 1..64 letters, digits, _ or -'),
  /** the durable consumer every replica pulls from */
  consumer: z.string().regex(NATS_NAME, 'must be 1..64 letters, digits, _ or -').default('onceonly'),
  /** subject filter → what its messages are */
  subjects: filterMap(
    'subject filters',
    (f) => SUBJECT_FILTER.test(f),
    'must be a NATS subject filter of at most 256 characters (* a whole token, > only last)',
  ),
  /** make the stream and the consumer when they do not exist (else an operator makes them) */
  create: z.boolean().default(true),
  /** messages handed out and not yet acknowledged, across the replicas: the back-pressure */
  max_ack_pending: z.number().int().min(1).max(100_000).default(1000),
  /** a message not acknowledged in this time (its replica died) is handed out again */
  ack_wait_seconds: z.number().int().min(1).max(3600).default(30),
  /** how long a message the store could not take waits before it is handed out again */
  nak_delay_ms: z.number().int().min(0).max(600_000).default(1000),
  /** messages a replica pulls at a time */
  batch: z.number().int().min(1).max(1000).default(100),
  /** messages a replica decides at once; one incident's, device's or chart's stay in the order handed out */
  concurrency: z.number().int().min(1).max(1024).default(64),
  tenant: z.string().min(1).optional(),
  /** where a refused message is published again, with the reason in the header `Onceonly-Reason` */
  reject_subject: z
    .string()
    .max(256)
    .regex(/^[^\s*>]+$/, 'must be a subject (no wildcards)')
    .optional(),
  user: z.string().min(1).optional(),
  password: z.string().min(1).optional(),
  token: z.string().min(1).optional(),
});
export type NatsIngestConfig = z.output<typeof natsIngestConfig>;

/**
 * A reject subject (or topic) that one of the ingest's own filters matches
 * would take back every message it rejects, and reject it again, forever:
 * one bad message became 30,000 rejects in 15 s. Refused at load.
 */
export const ingestConfig = z
  .strictObject({ mqtt: mqttIngestConfig.optional(), nats: natsIngestConfig.optional() })
  .superRefine((c, ctx) => {
    const loop = (filters: Record<string, unknown>, target: string | undefined, matches: (f: string, t: string) => boolean, path: string[]) => {
      const filter = target === undefined ? undefined : Object.keys(filters).find((f) => matches(f, target));
      if (filter !== undefined)
        ctx.addIssue({
          code: 'custom',
          path,
          message: `the filter ${JSON.stringify(filter)} takes ${JSON.stringify(target)} back: every rejected message would be rejected again, forever; publish rejects where no filter of this ingest reads`,
        });
    };
    if (c.nats) loop(c.nats.subjects, c.nats.reject_subject, subjectMatches, ['nats', 'reject_subject']);
    if (c.mqtt) loop(c.mqtt.topics, c.mqtt.reject_topic, topicMatches, ['mqtt', 'reject_topic']);
  })
  .prefault({});
