import type pg from 'pg';
import { type ConnectGate, gatedClient } from './connect-gate.js';
import { connectionConfig } from './pool.js';

interface Open {
  client: pg.Client;
  ready: Promise<unknown>;
}

/**
 * The one connection health probes use, apart from the pool.
 *
 * On the pool a probe waits behind every query queued for a connection
 * (forty copies of one fault in flight), so a busy replica would read its
 * own queue as a store that is gone. Postgres answers each connection from
 * a backend of its own, so a SELECT 1 here is answered beside the queue.
 *
 * A probe still unanswered when the next one comes was given up by its
 * caller (probes come one deadline apart): its connection hangs, on a path
 * that died without a FIN or RST the kernel has not noticed yet. It is closed
 * and the next probe opens a fresh one, so one dead socket never makes every
 * later probe wait behind it and keep the replica failed open. Connections
 * pass the same gate as the pool's, so an outage paces both.
 */
export class ProbeConnection {
  private open: Open | null = null;
  private inFlight: Open | null = null;
  private readonly Client: typeof pg.Client;

  constructor(
    private readonly url: string,
    private readonly schema: string,
    gate: ConnectGate,
  ) {
    this.Client = gatedClient(gate);
  }

  async check(): Promise<void> {
    if (this.inFlight) this.drop(this.inFlight);
    const conn = this.open ?? this.connect();
    this.inFlight = conn;
    try {
      await conn.ready;
      await conn.client.query('SELECT 1');
    } catch (err) {
      this.drop(conn);
      throw err;
    } finally {
      if (this.inFlight === conn) this.inFlight = null;
    }
  }

  async close(): Promise<void> {
    const conn = this.open;
    this.open = null;
    if (conn) await conn.client.end().catch(() => {});
  }

  private connect(): Open {
    const client = new this.Client(connectionConfig(this.url, this.schema));
    // A connection that dies while idle says so here; the next probe notices and replaces it.
    client.on('error', () => this.drop(conn));
    const conn: Open = { client, ready: client.connect() };
    conn.ready.catch(() => {});
    this.open = conn;
    return conn;
  }

  private drop(conn: Open): void {
    if (this.open === conn) this.open = null;
    if (this.inFlight === conn) this.inFlight = null;
    conn.client.end().catch(() => {});
  }
}
