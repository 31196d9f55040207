/**
 * The nemesis's real parts: a store (a redis-server of its own, or a
 * Postgres schema of its own, on a server of its own when the schedule
 * crashes it) behind a fault proxy, a NATS JetStream stream,
 * a webhook receiver whose answers a fault can change, and replicas of the
 * built CLI with the default fail-open settings, each with its own journal,
 * that a fault can kill and the rig starts again on the same journal.
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { startFake, type FakeServer, type Fault as ReceiverFault } from '../../fakes/http-fake.js';
import { startFaultProxy, type FaultProxy } from '../../helpers/fault-proxy.js';
import { dropSchema, PG_URL } from '../../helpers/postgres.js';
import { spawnServer, type ServerProcess } from '../../helpers/process.js';
import { startPostgres, type PostgresServer } from '../../helpers/postgres-server.js';
import { startRedis, type RedisServer } from '../../helpers/redis.js';
import { tempDir } from '../../helpers/tmp.js';
import { until } from '../../helpers/wait.js';
import type { Schedule } from './schedule.js';

export const NATS_URL = 'nats://127.0.0.1:4222';
const SKEW = fileURLToPath(new URL('../../fixtures/skewed-clock.mjs', import.meta.url));
/** The receiver's call deadline: a "timeout" fault answers later than this. */
export const RECEIVER_TIMEOUT_MS = 1000;

export interface Rig {
  readonly redis: RedisServer | null;
  /** A Postgres of the schedule's own, when it crashes the store (else the machine's, a schema of its own). */
  readonly pgServer: PostgresServer | null;
  readonly proxy: FaultProxy;
  readonly receiver: FakeServer;
  /** Where the receiver's answers come from while no fault is on. */
  receiverFault: (at: number) => ReceiverFault;
  readonly nc: NatsConnection;
  readonly subject: string;
  /** The replicas' URLs now ('' while one restarts). */
  readonly urls: string[];
  readonly procs: ServerProcess[];
  /** Every replica process that ever ran, for its metrics while alive and its log. */
  readonly all: ServerProcess[];
  restart(i: number, signal: 'SIGKILL' | 'SIGTERM'): Promise<void>;
  close(): Promise<void>;
}

export async function startRig(s: Schedule): Promise<Rig> {
  const run = `n${randomBytes(4).toString('hex')}`;
  const dir = tempDir('onceonly-nemesis-');
  const cleanup: Array<() => Promise<unknown>> = [async () => dir.remove()];
  const close = async () => {
    for (const f of cleanup.reverse()) await f().catch(() => undefined);
  };
  try {
    let redis: RedisServer | null = null;
    let pgServer: PostgresServer | null = null;
    let storeUrl: (address: string) => string;
    let target: string;
    if (s.store === 'redis') {
      // DEBUG (SLEEP) is refused by Redis 7 unless enabled; local connections are enough.
      redis = await startRedis(['--enable-debug-command', 'local', ...(s.persistent ? ['--appendonly', 'yes', '--appendfsync', 'always'] : [])]);
      const r = redis;
      cleanup.push(() => r.stop());
      target = `127.0.0.1:${redis.port}`;
      storeUrl = (address) => `redis://${address}`;
    } else {
      const schema = `oo_nemesis_${run}`;
      // A schedule that crashes the store gets a server of its own: the machine's shared one serves every other test.
      const own = s.faults.some((f) => f.fault.kind === 'store-restart') ? await startPostgres() : null;
      if (own) {
        pgServer = own;
        cleanup.push(() => own.stop());
      } else cleanup.push(() => dropSchema(schema));
      const base = own?.url ?? PG_URL;
      const u = new URL(base);
      target = `${u.hostname}:${u.port || 5432}`;
      storeUrl = (address) => {
        const v = new URL(base);
        const [h, p] = [address.slice(0, address.lastIndexOf(':')), address.slice(address.lastIndexOf(':') + 1)];
        v.hostname = h;
        v.port = p;
        v.searchParams.set('schema', schema);
        return v.toString();
      };
    }
    const proxy = await startFaultProxy(target);
    cleanup.push(() => proxy.close());

    const rig = {} as { receiverFault: (at: number) => ReceiverFault };
    rig.receiverFault = () => 'ok';
    const receiver = await startFake(() => ({ status: 200, body: {} }));
    receiver.faults = (r) => rig.receiverFault(r.at);
    cleanup.push(() => receiver.close());

    const nc = await connect({ servers: NATS_URL });
    const stream = `OO_${run}`;
    cleanup.push(async () => {
      await (await jetstreamManager(nc)).streams.delete(stream).catch(() => undefined);
      await nc.close();
    });
    const subject = `${run}.faults`;

    const configOf = (i: number) => {
      const file = join(dir.path, `replica-${i}.yaml`);
      writeFileSync(
        file,
        // The fail-open settings are the defaults: only the journal's path is each replica's own.
        `failopen: { journal_path: ${JSON.stringify(join(dir.path, `journal-${i}.db`))} }\n` +
          `adapters: [ { name: hook, type: webhook, url: "${receiver.url}/in", timeout_ms: ${RECEIVER_TIMEOUT_MS} } ]\n` +
          'delivery: { lease_ms: 3000, base_delay_ms: 50, max_delay_ms: 1000, max_retries: 200 }\n' +
          `ingest:\n  nats:\n    url: ${NATS_URL}\n    stream: ${stream}\n    subjects: { "${subject}": incident }\n` +
          '    ack_wait_seconds: 3\n    nak_delay_ms: 200\n',
      );
      return file;
    };
    const spawnReplica = (i: number) =>
      spawnServer(['--port', '0', '--store', storeUrl(proxy.address), '--config', configOf(i)], {
        // NEMESIS_LOG_LEVEL=debug keeps every delivery's line in each replica's log, to read beside a failure.
        ...(process.env.NEMESIS_LOG_LEVEL ? { LOG_LEVEL: process.env.NEMESIS_LOG_LEVEL } : {}),
        ...(s.skewed === i ? { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import=${SKEW}`.trim() } : {}),
      });
    const procs: ServerProcess[] = [];
    const all: ServerProcess[] = [];
    cleanup.push(() => Promise.all(procs.map((p) => p.stop('SIGKILL'))));
    for (let i = 0; i < s.replicas; i++) {
      const p = await spawnReplica(i);
      procs.push(p);
      all.push(p);
    }
    const urls = procs.map((p) => p.url);
    const restarting: Array<Promise<void> | undefined> = [];
    await until(
      () => procs.every((p) => p.lines.some((l) => l.includes('NATS ingest pulling'))) || null,
      30_000,
      () => 'a replica never pulled from NATS',
    );
    return Object.assign(rig, {
      redis,
      pgServer,
      proxy,
      receiver,
      nc,
      subject,
      urls,
      procs,
      all,
      restart(i: number, signal: 'SIGKILL' | 'SIGTERM') {
        // One replica's restarts one after another, as an orchestrator does: a second one drawn while the
        // first is still starting would start a third process on the journal the second one holds.
        const run = (restarting[i] ?? Promise.resolve()).then(async () => {
          urls[i] = '';
          await procs[i]!.stop(signal);
          const p = await spawnReplica(i);
          procs[i] = p;
          all.push(p);
          urls[i] = p.url;
        });
        restarting[i] = run.catch(() => undefined);
        return run;
      },
      close,
    });
  } catch (err) {
    await close();
    throw err;
  }
}
