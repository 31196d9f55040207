/**
 * A TCP proxy on loopback that puts the faults of a real network between a
 * replica and its store: latency, a blackhole, a half-close, a reset, and a
 * refused port. Every fault can be switched on and off while connections are
 * open; the proxy counts the connections it is asked for, so a test can tell
 * a bounded reconnect from a storm.
 *
 * A blackhole models packets lost in both directions with nobody answering:
 * no byte moves and no RST or FIN is sent, on open connections and on new
 * ones alike. TCP retransmits what it sent, so when the network heals before
 * the kernel gives up, every byte arrives, late and in order: `heal()`
 * resumes the held bytes. A long partition ends the other way: the kernels
 * give up and the connections die, `heal({ dropConnections: true })`.
 * (A proxy that threw bytes away would corrupt a byte stream in a way TCP
 * never does.)
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { once } from 'node:events';

export interface FaultProxy {
  readonly port: number;
  /** host:port, to put in a store URL */
  readonly address: string;
  /** connections accepted so far (each is a connection attempt by a client) */
  readonly accepted: number;
  /** connections open now */
  readonly open: number;
  /** The local ports of the proxy's connections to the store: how the store sees this proxy's clients (Postgres's client_port). */
  upstreamPorts(): number[];
  /** Delay every chunk, in each direction, by `ms` (0: none); order is kept. */
  latency(ms: number): void;
  /** Stop moving bytes on every connection, open and new, without closing any. */
  blackhole(): void;
  /** End the blackhole: held bytes flow again in order, or (a long partition) every connection dies. */
  heal(opts?: { dropConnections?: boolean }): void;
  /** Stop moving bytes, for good, on the connections open now, closing none; new ones flow (a path that died unnoticed by TCP). */
  freezeOpen(): void;
  /** Close the store's side of every open connection with a FIN and keep the client's side open, unanswered. */
  halfClose(): void;
  /** RST every open connection. */
  reset(): void;
  /** Refuse new connections with an RST at once (the port is closed) until `refuse(false)`. */
  refuse(on?: boolean): void;
  close(): Promise<void>;
}

interface Pair {
  client: Socket;
  upstream: Socket;
  /** chunks held by the blackhole, in arrival order, with the socket they go to */
  held: Array<{ to: Socket; chunk: Buffer }>;
  /** the store's side closed with a FIN to the client; the client's writes go nowhere */
  halfClosed: boolean;
  /** no byte moves on it again (freezeOpen): nothing held is ever delivered, so nothing arrives corrupt */
  frozen: boolean;
}

/** Starts a proxy on a free loopback port forwarding to `target` (host:port). */
export async function startFaultProxy(target: string): Promise<FaultProxy> {
  const [host, portText] = [target.slice(0, target.lastIndexOf(':')), target.slice(target.lastIndexOf(':') + 1)];
  const pairs = new Set<Pair>();
  let delayMs = 0;
  let holding = false;
  let refusing = false;
  let accepted = 0;

  /**
   * Each socket's chunks in flight, in order, with when each is due. One queue
   * and one timer per socket, so a chunk never overtakes an earlier one: a
   * timer per chunk could (Node orders timers by its loop's cached clock,
   * which lags Date.now() inside one turn), and a byte stream reordered is
   * corrupt in a way no network makes it.
   */
  const queues = new WeakMap<Socket, { chunks: Array<{ due: number; chunk: Buffer }>; timer: NodeJS.Timeout | null }>();
  const pump = (to: Socket) => {
    const q = queues.get(to)!;
    q.timer = null;
    while (q.chunks.length > 0 && q.chunks[0]!.due <= Date.now()) {
      const { chunk } = q.chunks.shift()!;
      if (!to.destroyed) to.write(chunk);
    }
    if (q.chunks.length > 0) q.timer = setTimeout(() => pump(to), Math.max(1, q.chunks[0]!.due - Date.now()));
  };
  const forward = (pair: Pair, to: Socket, chunk: Buffer) => {
    if (pair.frozen) return;
    if (holding) {
      pair.held.push({ to, chunk });
      return;
    }
    let q = queues.get(to);
    if (!q) queues.set(to, (q = { chunks: [], timer: null }));
    if (delayMs === 0 && q.chunks.length === 0) {
      if (!to.destroyed) to.write(chunk);
      return;
    }
    // Behind what is already queued, and no earlier than its own latency.
    q.chunks.push({ due: Math.max(Date.now() + delayMs, q.chunks.at(-1)?.due ?? 0), chunk });
    if (!q.timer) pump(to);
  };

  const server: Server = createServer((client) => {
    accepted++;
    if (refusing) {
      client.resetAndDestroy();
      return;
    }
    const upstream = createConnection({ host, port: Number(portText) });
    const pair: Pair = { client, upstream, held: [], halfClosed: false, frozen: false };
    pairs.add(pair);
    const drop = () => {
      pairs.delete(pair);
      if (!client.destroyed) client.destroy();
      if (!upstream.destroyed) upstream.destroy();
    };
    client.on('data', (c) => {
      if (!pair.halfClosed) forward(pair, upstream, c);
    });
    upstream.on('data', (c) => forward(pair, client, c));
    // A FIN from one side is passed on as a FIN, not as a close of both.
    client.on('end', () => upstream.end());
    upstream.on('end', () => {
      if (!holding) client.end();
    });
    client.on('error', drop);
    upstream.on('error', drop);
    client.on('close', drop);
    upstream.on('close', () => {
      // While blackholed the client must not learn that the store side closed.
      if (!holding && !pair.halfClosed) drop();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as { port: number }).port;

  return {
    port,
    address: `127.0.0.1:${port}`,
    get accepted() {
      return accepted;
    },
    get open() {
      return pairs.size;
    },
    upstreamPorts() {
      return [...pairs].map((p) => p.upstream.localPort).filter((port): port is number => port !== undefined);
    },
    latency(ms) {
      delayMs = ms;
    },
    blackhole() {
      holding = true;
    },
    heal(opts = {}) {
      holding = false;
      for (const pair of [...pairs]) {
        if (opts.dropConnections) {
          pair.client.resetAndDestroy();
          pair.upstream.destroy();
          pairs.delete(pair);
          continue;
        }
        const held = pair.held.splice(0);
        for (const { to, chunk } of held) forward(pair, to, chunk);
        if (pair.upstream.destroyed) pair.client.end();
      }
    },
    freezeOpen() {
      for (const pair of pairs) pair.frozen = true;
    },
    halfClose() {
      for (const pair of pairs) {
        pair.halfClosed = true;
        pair.upstream.destroy(); // the store's side is gone
        pair.client.end(); // the client is told with a FIN, and may still write into the void
      }
    },
    reset() {
      for (const pair of [...pairs]) {
        pair.client.resetAndDestroy();
        pair.upstream.destroy();
        pairs.delete(pair);
      }
    },
    refuse(on = true) {
      refusing = on;
    },
    async close() {
      for (const pair of [...pairs]) {
        pair.client.destroy();
        pair.upstream.destroy();
      }
      pairs.clear();
      await new Promise((r) => server.close(r));
    },
  };
}
