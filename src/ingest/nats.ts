import { AckPolicy, type Consumer, type ConsumerMessages, type JsMsg, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect, headers, type NatsConnection } from '@nats-io/transport-node';
import { Counter, Gauge } from 'prom-client';
import type { NatsIngestConfig } from '../config/ingest.js';
import { decideOne, type IngestOptions, type Ingests, kindOf } from './decide.js';
import { KeyedLines } from './keyed-lines.js';
import { orderKey } from './order-key.js';
import { subjectMatches } from '../config/ingest.js';

export { subjectMatches };

/** A NATS URL as logs show it: scheme, host and port (credentials and paths stay out). */
const shown = (url: string) => url.replace(/^(\w+:\/\/)(?:[^@/]*@)?([^/]*).*$/, '$1$2');

export interface NatsIngestOptions extends IngestOptions {
  /** true while the replica fails open on its shared store: pulling stops, so the stream keeps what the store cannot take */
  paused: () => boolean;
}

/**
 * Incidents, device events, violations and Alertmanager payloads taken from
 * a NATS JetStream stream through one durable pull consumer that every
 * replica pulls from: each message goes to one replica at a time. A message
 * is acknowledged only after its decision is durable; a redelivery (its replica died before the
 * acknowledgement, or the acknowledgement was lost) is decided as the repeat
 * it is. One the store cannot take is nak'd with `nak_delay_ms`; one that is
 * not valid input is acknowledged, counted and, with `reject_subject`,
 * published there with the reason. `max_ack_pending` bounds what is handed
 * out and not acknowledged; while the replica fails open it pulls nothing,
 * so the stream holds the backlog until the store is back.
 */
export class NatsIngest {
  private nc: NatsConnection | null = null;
  private messages: ConsumerMessages | null = null;
  private running: Promise<void> | null = null;
  private stopping = false;
  private readonly counted: Counter<'outcome'>;
  private readonly pending: Gauge;
  private readonly pausedGauge: Gauge;
  private pendingTimer: NodeJS.Timeout | null = null;
  /** The messages being decided: `concurrency` at a time, one incident's or one device's in the order handed out. */
  private readonly lines: KeyedLines<JsMsg>;

  constructor(
    private readonly c: NatsIngestConfig,
    private readonly ingests: Ingests,
    private readonly o: NatsIngestOptions,
  ) {
    this.counted = new Counter({
      name: 'onceonly_ingest_nats_messages_total',
      help: 'JetStream messages by outcome: consumed (handed to this replica), acked (decided, then acknowledged), rejected (not valid input; acknowledged), nakd (the store could not take it; handed out again later)',
      labelNames: ['outcome'],
      registers: [o.registry],
    });
    this.pending = new Gauge({
      name: 'onceonly_ingest_nats_pending',
      help: "the consumer's messages not yet handed out plus those handed out and not acknowledged, as the server counts them",
      registers: [o.registry],
    });
    this.pausedGauge = new Gauge({ name: 'onceonly_ingest_nats_paused', help: '1 while this replica fails open and pulls nothing', registers: [o.registry] });
    this.lines = new KeyedLines(
      c.concurrency,
      (m) => {
        const kind = kindOf(c.subjects, m.subject, subjectMatches);
        // A message too large or on no filter is refused at once: it needs no line.
        return kind === undefined || m.data.length > o.maxBytes ? null : orderKey(kind, m.data);
      },
      async (m) => {
        await this.take(m);
        // The decision found the store gone (or a stop began): end the pull at once, not at the next message,
        // which may not come; the loop then pauses, and what was handed out meanwhile is handed out again.
        if (this.o.paused() || this.stopping) await this.messages?.close().catch(() => undefined);
      },
    );
  }

  /**
   * Connects, makes the stream and consumer when configured to, and pulls.
   * It does not wait for NATS: one that is down at start is tried every
   * second while HTTP serves (the log says `NATS ingest pulling` once it is).
   */
  start(): void {
    this.running = (async () => {
      while (!this.stopping) {
        try {
          await this.pull(await this.open());
        } catch (err) {
          this.o.connectionError(err as Error);
          await this.nc?.close().catch(() => undefined);
          this.nc = null;
          if (!this.stopping) await new Promise((r) => setTimeout(r, 1000));
        }
      }
    })();
  }

  private async open(): Promise<Consumer> {
    const nc = await connect({
      servers: this.c.url,
      name: 'onceonly',
      maxReconnectAttempts: -1,
      reconnectTimeWait: 1000,
      ...(this.c.user ? { user: this.c.user, pass: this.c.password } : {}),
      ...(this.c.token ? { token: this.c.token } : {}),
    });
    this.nc = nc;
    const jsm = await jetstreamManager(nc);
    const filters = Object.keys(this.c.subjects);
    if (this.c.create) {
      const stream = await jsm.streams.info(this.c.stream).catch(async () => jsm.streams.add({ name: this.c.stream, subjects: filters }));
      // A stream of exactly these subjects needs no filter; another one is filtered to them (several filters need NATS 2.10).
      const same = [...stream.config.subjects].sort().join('\n') === [...filters].sort().join('\n');
      await jsm.consumers.add(this.c.stream, {
        durable_name: this.c.consumer,
        ack_policy: AckPolicy.Explicit,
        max_ack_pending: this.c.max_ack_pending,
        ack_wait: this.c.ack_wait_seconds * 1_000_000_000,
        ...(same ? {} : filters.length === 1 ? { filter_subject: filters[0] } : { filter_subjects: filters }),
      });
    }
    const consumer = await jetstream(nc).consumers.get(this.c.stream, this.c.consumer);
    if (this.pendingTimer) clearInterval(this.pendingTimer);
    this.pendingTimer = setInterval(() => {
      consumer.info().then(
        (i) => this.pending.set(i.num_pending + i.num_ack_pending),
        (err: Error) => this.o.connectionError(err),
      );
    }, 2000);
    this.pendingTimer.unref();
    this.o.logger.info({ server: shown(this.c.url), stream: this.c.stream, consumer: this.c.consumer, filters }, 'NATS ingest pulling');
    return consumer;
  }

  /** Stops pulling; the messages being decided finish, the rest are handed out again after ack_wait (or at once, when nak'd). */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.pendingTimer) clearInterval(this.pendingTimer);
    await this.messages?.close().catch(() => undefined);
    await this.running;
    await this.nc?.drain().catch(() => undefined);
    this.nc = null;
  }

  /** Pulls in batches while not stopping; while the replica fails open it pulls nothing and looks again every 250 ms. */
  private async pull(consumer: Consumer): Promise<void> {
    while (!this.stopping) {
      if (this.o.paused()) {
        this.pausedGauge.set(1);
        await new Promise((r) => setTimeout(r, 250));
        continue;
      }
      this.pausedGauge.set(0);
      try {
        this.messages = await consumer.consume({ max_messages: this.c.batch });
        for await (const m of this.messages) {
          await this.lines.admit(m);
          // Failing open now: pulling stops until the store is back; what was pulled and not decided is handed out again after ack_wait.
          if (this.o.paused() || this.stopping) break;
        }
      } catch (err) {
        this.o.connectionError(err as Error);
        await new Promise((r) => setTimeout(r, 1000));
      } finally {
        // What was taken is decided, acknowledged or nak'd before pulling stops or starts again.
        await this.lines.idle();
        await this.messages?.close().catch(() => undefined);
        this.messages = null;
      }
    }
  }

  private async take(m: JsMsg): Promise<void> {
    this.counted.labels('consumed').inc();
    if (this.o.paused() || this.stopping) {
      m.nak(this.c.nak_delay_ms);
      this.counted.labels('nakd').inc();
      return;
    }
    const kind = kindOf(this.c.subjects, m.subject, subjectMatches);
    // A decision that runs long (a slow store, 1,000 alerts in one payload) tells the server it is still
    // at work, a third of ack_wait apart, so the message is not handed to another replica meanwhile.
    const working = setInterval(() => m.working(), Math.max(100, (this.c.ack_wait_seconds * 1000) / 3));
    working.unref();
    try {
      const r =
        kind === undefined
          ? ({ ok: false, reason: 'invalid', message: `no subject filter takes ${m.subject.slice(0, 200)}` } as const)
          : m.data.length > this.o.maxBytes
            ? ({ ok: false, reason: 'invalid', message: `${m.data.length} bytes, over limits.body_bytes (${this.o.maxBytes})` } as const)
            : await decideOne(
                this.ingests,
                kind,
                Buffer.from(m.data),
                this.o.tenant,
                this.o.scoped,
                { requestId: `nats:${this.c.stream}#${m.seq}` },
                { alertsPerPost: this.o.alertsPerPost },
              );
      if (!r.ok) {
        this.counted.labels('rejected').inc();
        this.o.logger.warn(
          { subject: m.subject.slice(0, 200), kind, reason: r.reason, error: r.message },
          'NATS ingest: message refused; acknowledged, not retried',
        );
        if (this.c.reject_subject && this.nc) {
          const h = headers();
          h.set('Onceonly-Reason', `${r.reason}: ${r.message}`.replace(/[\r\n]+/g, ' '));
          h.set('Onceonly-Subject', m.subject.slice(0, 200));
          this.nc.publish(this.c.reject_subject, m.data, { headers: h });
        }
      } else this.counted.labels('acked').inc();
      // Not waited for: an acknowledgement that is lost hands the message out again after ack_wait, a repeat decided as one.
      m.ack();
    } catch (err) {
      this.counted.labels('nakd').inc();
      this.o.storeError(err as Error);
      m.nak(this.c.nak_delay_ms);
    } finally {
      clearInterval(working);
    }
  }
}
