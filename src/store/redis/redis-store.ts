import { type EpochMark, GENERATION, MIN_READER, newEpoch, newerLayoutProblem, type SharedStore } from '../contract/index.js';
import type { RedisConnection } from './connection.js';
import { RedisDeliveries } from './redis-deliveries.js';
import { RedisDevices } from './redis-devices.js';
import { RedisIncidents } from './redis-incidents.js';
import { RedisQueries } from './redis-queries.js';
import { RedisWindows } from './redis-windows.js';
import { RedisRequests } from './redis-requests.js';
import { RedisSilences } from './redis-silences.js';
import { RedisInhibitors } from './redis-inhibitors.js';
import { RedisTickets } from './redis-tickets.js';
import { RedisHeartbeats } from './redis-heartbeats.js';
import { RedisFlaps } from './redis-flaps.js';
import { RedisHistory, RedisHistoryWrites } from './redis-history.js';
import { RedisGroups } from './redis-groups.js';
import { EPOCH_KEY, EPOCH_SEQ_KEY, keyLayout, LAYOUT_KEY, READER_KEY, type KeyLayout } from './keys.js';
import { scripts } from './scripts.js';
import { isTransportFault, withTimeout } from '../errors.js';
import { LayoutSeam } from './layout-seam.js';

export interface RedisStoreOptions {
  expiredGraceMs?: number;
  /** How many hash-tag shards the keys are spread over (`redis.shards`; part of the stored layout). */
  shards?: number;
  /** The store moved to another shard count (`migrate-shards` froze a shard it called). */
  onMoved?: (from: number, to: number) => void;
  /**
   * init() checks that Redis keeps what it acknowledged (persistence on,
   * maxmemory-policy noeviction) and refuses one that does not, unless
   * `acceptDataLoss`. A server checks; a store built directly does not.
   */
  checkPersistence?: boolean;
  acceptDataLoss?: boolean;
  /** told when the check could not be made (CONFIG refused, as on managed Redis) */
  onUnchecked?: (why: string) => void;
}

/**
 * Shared store for active-active replicas. Every operation is ONE Lua script,
 * one round trip, on the server's clock; TTLs are Redis's own PX expiries, so
 * nothing needs sweeping. The facets share one connection; health probes
 * have one of their own (connection.ts).
 */
export class RedisStore implements SharedStore {
  readonly kind: string;
  readonly incidents: RedisIncidents;
  readonly devices: RedisDevices;
  readonly windows: RedisWindows;
  readonly deliveries: RedisDeliveries;
  readonly queries: RedisQueries;
  readonly requests: RedisRequests;
  readonly silences: RedisSilences;
  readonly inhibitors: RedisInhibitors;
  readonly tickets: RedisTickets;
  readonly heartbeats: RedisHeartbeats;
  readonly flaps: RedisFlaps;
  readonly groups: RedisGroups;
  readonly history: RedisHistory;
  readonly layout: KeyLayout;
  /** Where every record's keys are, and the guard on every write (layout-seam.ts). */
  readonly seam: LayoutSeam;

  constructor(
    readonly conn: RedisConnection,
    kind: 'redis' | 'redis-cluster' = 'redis',
    private readonly options: RedisStoreOptions = {},
  ) {
    this.kind = kind;
    const k = (this.layout = keyLayout(options.shards));
    const seam = (this.seam = new LayoutSeam(conn, k, options.onMoved));
    const follow = <T extends object>(facet: T) => seam.follow(facet);
    this.incidents = follow(new RedisIncidents(seam, options.expiredGraceMs, kind === 'redis-cluster'));
    const devices = new RedisDevices(seam);
    this.devices = follow(devices);
    this.windows = follow(new RedisWindows(seam));
    this.deliveries = follow(new RedisDeliveries(seam));
    this.queries = follow(new RedisQueries(seam.conn, this.incidents, k, devices));
    this.requests = follow(new RedisRequests(seam));
    this.silences = new RedisSilences(seam.conn);
    this.inhibitors = new RedisInhibitors(seam.conn);
    this.tickets = follow(new RedisTickets(seam));
    this.heartbeats = new RedisHeartbeats(seam.conn);
    this.flaps = follow(new RedisFlaps(seam));
    this.groups = follow(new RedisGroups(seam));
    // Each part of a history batch is its own call through the seam, so a shard move makes again only the part it refused.
    const cluster = kind === 'redis-cluster';
    this.history = follow(new RedisHistory(seam, follow(new RedisHistoryWrites(seam, cluster)), cluster));
  }

  /**
   * Records the shard count in Redis, or checks it against the one recorded:
   * two replicas on different counts would look for one key in two places and
   * both answer CREATE, so a replica configured differently refuses to start.
   * While a shard move runs (`onceonly migrate-shards`) the record is the new
   * count, and the replica learns the old one to adopt keys from.
   * A Redis that does not answer now is not waited for (the replica starts and
   * fails open, as it does whenever Redis is away); the next start checks.
   */
  async init(): Promise<void> {
    const shards = this.layout.shards;
    let held: unknown;
    try {
      // First whether this build can read what the keys hold at all: one that cannot refuses before writing anything.
      const reader = await withTimeout(this.conn.evalScript(scripts.readerGeneration, [READER_KEY], [MIN_READER, GENERATION, shards]), 2000);
      const problem = newerLayoutProblem(Number(reader), 'this Redis');
      if (problem) throw new Error(problem);
      held = await withTimeout(this.conn.send(LAYOUT_KEY, ['SET', LAYOUT_KEY, String(shards), 'NX', 'GET']), 2000);
      if (held === null || held === undefined || Number(held) === shards) await withTimeout(this.seam.begin(), 2000);
    } catch (err) {
      if (isTransportFault(err)) return;
      throw err;
    }
    if (held !== null && held !== undefined && Number(held) !== shards) {
      throw new Error(
        `Redis holds keys laid out in ${String(held)} shards and this replica is configured with redis.shards: ${shards}; every replica must use the count the keys were written with (changing it moves them: see docs/scaling.md)`,
      );
    }
    if (!this.options.checkPersistence) return;
    const loses = await this.losesDataSilently();
    if (loses === 'unchecked')
      this.options.onUnchecked?.('Redis refused CONFIG GET (a managed Redis?): its persistence and eviction policy could not be checked');
    else if (loses !== null && !this.options.acceptDataLoss)
      throw new Error(`this Redis can lose acknowledged data: ${loses}. Fix the setting, or set redis.accept_data_loss: true to run on it anyway`);
  }

  /**
   * The setting by which this Redis loses what it acknowledged without a
   * trace (no AOF and no RDB snapshots: a restart empties it; an eviction
   * policy other than noeviction: a full Redis drops live keys and pending
   * deliveries), null when none, or 'unchecked' where CONFIG is not allowed.
   * As BullMQ checks the eviction policy before it trusts a Redis with jobs.
   */
  private async losesDataSilently(): Promise<string | null | 'unchecked'> {
    const get = async (name: string): Promise<string | null> => {
      const reply = (await withTimeout(this.conn.send(LAYOUT_KEY, ['CONFIG', 'GET', name]), 2000)) as unknown;
      if (Array.isArray(reply)) return reply.length >= 2 ? String(reply[1]) : null;
      if (reply && typeof reply === 'object') return String((reply as Record<string, unknown>)[name] ?? '') || null;
      return null;
    };
    let aof: string | null;
    let save: string | null;
    let policy: string | null;
    try {
      [aof, save, policy] = [await get('appendonly'), await get('save'), await get('maxmemory-policy')];
    } catch (err) {
      if (isTransportFault(err)) return null;
      return 'unchecked';
    }
    if (policy !== null && policy !== 'noeviction')
      return `maxmemory-policy is ${policy} (use noeviction: a full Redis then refuses writes, and onceonly fails open, instead of dropping keys)`;
    if (aof !== 'yes' && (save === null || save.trim() === '')) return 'it keeps nothing on disk (appendonly no and no save points): a restart empties it';
    return null;
  }

  /**
   * Redis expires keys itself: every record, marker and counter carries its
   * lifetime as a PX expiry. What the sweep does is trim the per-tenant
   * listing indexes of the keys that expired (lua/lib/listing.lua); the count it answers is those.
   */
  async sweepExpired() {
    return this.queries.trimListings();
  }

  ping() {
    return this.conn.ping();
  }

  /** The marker and its count, one hash tag of their own (one slot in a cluster), in one script. */
  async tickEpoch(): Promise<EpochMark> {
    const [epoch, seq] = (await this.conn.send(EPOCH_KEY, [
      'EVAL',
      "local e = redis.call('GET', KEYS[1]) if not e then e = ARGV[1] redis.call('SET', KEYS[1], e) redis.call('DEL', KEYS[2]) end return {e, redis.call('INCR', KEYS[2])}",
      '2',
      EPOCH_KEY,
      EPOCH_SEQ_KEY,
      newEpoch(),
    ])) as [string, number];
    return { epoch: String(epoch), seq: Number(seq) };
  }

  probeHealth() {
    return this.conn.probe ? this.conn.probe() : this.conn.ping();
  }

  close() {
    return this.conn.close();
  }
}
