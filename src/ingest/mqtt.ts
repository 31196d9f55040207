import { hostname } from 'node:os';
import { connect, type IPublishPacket, type MqttClient, type Packet } from 'mqtt';
import { Counter, Gauge } from 'prom-client';
import type { MqttIngestConfig } from '../config/ingest.js';
import { origin } from '../delivery/http.js';
import { decideOne, type IngestOptions, type Ingests, kindOf } from './decide.js';
import { topicMatches } from '../config/ingest.js';

export { topicMatches };

export interface MqttIngestOptions extends IngestOptions {
  /** the longest wait between attempts at a message the store could not take */
  maxRetryMs?: number;
}

/**
 * Device status events, incidents, SPC violations and Alertmanager payloads
 * taken from an MQTT 5 broker. Each topic filter is subscribed as the shared
 * subscription `$share/<group>/<filter>` (QoS 1), so the replicas of a group
 * split the messages. A message is acknowledged (PUBACK) only after its
 * decision is durable, or after it was refused for good (not valid input:
 * counted, logged and, with `reject_topic`, published there with the
 * reason); one the store cannot take now is tried again, with backoff, and
 * not acknowledged meanwhile. mqtt.js hands this client one message at a
 * time and reads the next once it is acknowledged, so the broker holds the
 * rest: that is the back-pressure. The session outlives a disconnect
 * (`session_expiry_seconds`), so what was taken but not acknowledged is sent
 * again when the replica comes back with its client id.
 */
export class MqttIngest {
  private client: MqttClient | null = null;
  private stopping = false;
  private readonly messages: Counter<'outcome'>;
  private readonly connected: Gauge;

  constructor(
    private readonly c: MqttIngestConfig,
    private readonly ingests: Ingests,
    private readonly o: MqttIngestOptions,
  ) {
    this.messages = new Counter({
      name: 'onceonly_ingest_mqtt_messages_total',
      help: 'MQTT messages taken, by outcome: decided (durable, then acknowledged), rejected (not valid input; acknowledged), retried (the store could not take it yet)',
      labelNames: ['outcome'],
      registers: [o.registry],
    });
    this.connected = new Gauge({ name: 'onceonly_ingest_mqtt_connected', help: '1 while connected to the ingest broker', registers: [o.registry] });
  }

  /**
   * Connects, and subscribes at every connect. It does not wait for the
   * broker: one that is down at start is tried every second, as after a
   * disconnect, while HTTP serves (`onceonly_ingest_mqtt_connected` says so).
   */
  start(): void {
    const client = connect(this.c.url, {
      protocolVersion: 5,
      clientId: this.c.client_id ?? `onceonly-${hostname().replace(/[^A-Za-z0-9_.-]/g, '_')}`.slice(0, 128),
      clean: false,
      reconnectPeriod: 1000,
      connectTimeout: 10_000,
      properties: { sessionExpiryInterval: this.c.session_expiry_seconds, maximumPacketSize: this.o.maxBytes + 65_536 },
      ...(this.c.username ? { username: this.c.username, password: this.c.password } : {}),
    });
    this.client = client;
    // mqtt.js sends the PUBACK once this calls back, and reads the next message only then.
    client.handleMessage = (packet: Packet, done: (err?: Error) => void) => {
      if (packet.cmd !== 'publish') return done();
      this.take(packet).then(
        () => done(),
        (err: Error) => done(err),
      );
    };
    client.on('connect', () => {
      this.connected.set(1);
      this.subscribe(client).catch((err: Error) => this.o.connectionError(err));
    });
    client.on('close', () => this.connected.set(0));
    client.on('error', (err) => this.o.connectionError(err));
  }

  private async subscribe(client: MqttClient): Promise<void> {
    const filters = Object.keys(this.c.topics).map((f) => `$share/${this.c.shared_group}/${f}`);
    const granted = await client.subscribeAsync(filters, { qos: this.c.qos });
    const refused = granted.filter((g) => g.qos > 2);
    if (refused.length > 0)
      throw new Error(`the broker refused the subscription to ${refused.map((g) => g.topic).join(', ')} (does it speak MQTT 5 shared subscriptions?)`);
    this.o.logger.info({ broker: origin(this.c.url), filters, client_id: client.options.clientId }, 'MQTT ingest subscribed');
  }

  /** Stops taking messages; one being decided finishes, one waiting for the store is left unacknowledged, for the broker to send again. */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.client?.endAsync();
    this.connected.set(0);
  }

  private async take(packet: IPublishPacket): Promise<void> {
    const kind = kindOf(this.c.topics, packet.topic, topicMatches);
    if (kind === undefined) return; // a topic no filter of ours matches: nothing to decide
    const payload = Buffer.isBuffer(packet.payload) ? packet.payload : Buffer.from(packet.payload);
    for (let attempt = 0; ; attempt++) {
      try {
        // The HTTP body bound holds here too (the broker's packet limit leaves room for the MQTT headers).
        const r =
          payload.length > this.o.maxBytes
            ? ({ ok: false, reason: 'invalid', message: `${payload.length} bytes, over limits.body_bytes (${this.o.maxBytes})` } as const)
            : await decideOne(
                this.ingests,
                kind,
                payload,
                this.o.tenant,
                this.o.scoped,
                { requestId: `mqtt:${packet.topic.slice(0, 200)}#${packet.messageId ?? 0}` },
                { alertsPerPost: this.o.alertsPerPost },
              );
        if (r.ok) {
          this.messages.labels('decided').inc();
          return;
        }
        this.messages.labels('rejected').inc();
        this.o.logger.warn({ topic: packet.topic, kind, reason: r.reason, error: r.message }, 'MQTT ingest: message refused; acknowledged, not retried');
        // Not awaited: its PUBACK comes in on this connection, which reads nothing more until this message is acknowledged.
        // mqtt.js keeps it and sends it again after a reconnect; the log line above keeps the refusal too.
        if (this.c.reject_topic && this.client)
          this.client
            .publishAsync(this.c.reject_topic, payload, {
              qos: 1,
              properties: { userProperties: { 'onceonly-reason': `${r.reason}: ${r.message}`, 'onceonly-topic': packet.topic } },
            })
            .catch((err: Error) => this.o.connectionError(err));
        return;
      } catch (err) {
        this.messages.labels('retried').inc();
        this.o.storeError(err as Error);
        if (this.stopping) throw err;
        await new Promise((r) => setTimeout(r, Math.min(this.o.maxRetryMs ?? 5000, 100 * 2 ** Math.min(attempt, 10))));
        if (this.stopping) throw err;
      }
    }
  }
}
