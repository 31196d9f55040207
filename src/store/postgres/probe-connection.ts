import { performance } from 'node:perf_hooks';
import type pg from 'pg';
import { StoreUnavailableError } from '../errors.js';
import { CONNECT_TIMEOUT_MS, type ConnectGate, gatedClient } from './connect-gate.js';
import { connectionConfig } from './pool.js';

interface Open {
  client: pg.Client;
  ready: Promise<unknown>;
  /** rejects when the connection is dropped, so nothing waits on it for ever */
  dropped: Promise<never>;
  /** ends the connection (once); resolves when it has ended */
  drop: () => Promise<void>;
  /** the checks still waiting on this connection, each with when it began */
  pending: Set<{ at: number }>;
}

/**
 * The one connection health probes use, apart from the pool.
 *
 * On the pool a probe waits behind every query queued for a connection
 * (forty copies of one fault in flight), so a busy replica would read its
 * own queue as a store that is gone. Postgres answers each connection from
 * a backend of its own, so a SELECT 1 here is answered beside the queue.
 *
 * Each probe sends its own SELECT 1 (probes that overlap queue on the one
 * connection, so a slow store never answers a later probe with an earlier
 * one's reply). A check unanswered for `stuckMs` (the time a connect may
 * take: 5 s) has a dead path under it, one that died without a FIN or RST
 * the kernel has not noticed yet: the next probe closes that connection and
 * opens a fresh one, so one dead socket never keeps every later probe
 * waiting and the replica failed open. Connections pass the same gate as
 * the pool's, so an outage paces both.
 */
export class ProbeConnection {
  private open: Open | null = null;
  private closed = false;
  private readonly Client: typeof pg.Client;

  constructor(
    private readonly url: string,
    private readonly schema: string,
    gate: ConnectGate,
    private readonly stuckMs = CONNECT_TIMEOUT_MS,
  ) {
    this.Client = gatedClient(gate);
  }

  async check(): Promise<void> {
    if (this.closed) throw new StoreUnavailableError('the probe connection is closed');
    const now = performance.now();
    if (this.open && [...this.open.pending].some((p) => p.at <= now - this.stuckMs)) void this.open.drop();
    const conn = this.open ?? this.connect();
    const mine = { at: now };
    conn.pending.add(mine);
    try {
      await Promise.race([conn.ready, conn.dropped]);
      await Promise.race([conn.client.query('SELECT 1'), conn.dropped]);
    } catch (err) {
      void conn.drop();
      throw err;
    } finally {
      conn.pending.delete(mine);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.open?.drop();
  }

  private connect(): Open {
    const client = new this.Client(connectionConfig(this.url, this.schema));
    let reject: (err: Error) => void = () => {};
    const dropped = new Promise<never>((_, r) => (reject = r));
    dropped.catch(() => {});
    let ended: Promise<void> | null = null;
    const conn: Open = {
      client,
      ready: client.connect(),
      dropped,
      pending: new Set(),
      drop: () => {
        if (ended) return ended;
        if (this.open === conn) this.open = null;
        reject(new StoreUnavailableError('Postgres did not answer the probe connection; it was closed for a fresh one'));
        ended = client.end().catch(() => {});
        return ended;
      },
    };
    conn.ready.catch(() => {});
    // A connection that dies while idle says so here; the next probe opens a fresh one.
    client.on('error', () => void conn.drop());
    this.open = conn;
    return conn;
  }
}
