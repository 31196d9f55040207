import type { ClaimOutcome } from '../../core/decision.js';
import { decodeRoute, encodeRoute, type OutboxPayload } from '../../core/outbox.js';
import {
  ACK_MEMORY_MS,
  type AckOutcome,
  DEFAULT_EXPIRED_GRACE_MS,
  type EscalateOutcome,
  type EscalationStep,
  type IncidentClaim,
  type IncidentDecisionResult,
  type IncidentRecord,
  type Origin,
  RECONCILE_MARKER_MS,
  type ReconcileOutcome,
  RESOLUTION_MEMORY_MS,
  type SharedIncidentStore,
  claimShown,
  outboxEntries,
  shownOfStored,
  staleResult,
  storedShown,
} from '../contract/index.js';
import { ErrorReply } from '@redis/client';
import type { RedisConnection } from './connection.js';
import type { KeyLayout } from './keys.js';
import { scripts } from './scripts.js';
import { adoptSets } from './adopt-sets.js';
import type { LayoutSeam } from './layout-seam.js';

/** ARGV for an optional outbox entry: the flag, then tenant, key, severity, summary, data, route. */
export const outboxArgs = (tenant: string, key: string, p: OutboxPayload | undefined) =>
  p ? ['1', tenant, key, p.severity, p.summary, JSON.stringify(p.data), encodeRoute(p.route) ?? ''] : ['', tenant, key, '', '', '', ''];

/**
 * "createdAt,lastSeenDelta,ttl,refires,updates,fingerprint", then a newline
 * and the route when the key has one, as the Lua scripts write it (lua/lib/record.lua).
 */
function parseRecord(tenant: string, key: string, value: string, identity = '', latest = ''): IncidentRecord {
  const m = /^(\d+),(\d+),(\d+),(\d+),(\d+),([^\n]*)(?:\n(.*))?$/s.exec(value);
  if (!m) throw new Error(`malformed incident record at ${key}: ${JSON.stringify(value)}`);
  const [createdAt, delta, ttl, refires, updates] = m.slice(1, 6).map(Number) as [number, number, number, number, number];
  const lastSeenAt = createdAt + delta;
  const route = decodeRoute(m[7]);
  return {
    tenant,
    key,
    fingerprint: m[6]!,
    createdAt,
    lastSeenAt,
    refires,
    updates,
    expiresAt: lastSeenAt + ttl,
    ...(route ? { route } : {}),
    ...shownOfStored(identity, latest),
  };
}

type DecideReply = [string, number, number, number, number, string, number, string, string, string];

interface Pending {
  claim: IncidentClaim;
  /** the shard count its record was pinned on (layout-seam.ts): its keys are built on this count or not at all */
  count: number;
  resolve: (r: IncidentDecisionResult) => void;
  reject: (err: unknown) => void;
}

/** A pending claim with its script arguments, made once when its group is formed. */
interface Prepared {
  p: Pending;
  keys: string[];
  args: Array<string | number>;
  /** the shard's hash tag: a cluster groups by it */
  tag: string;
}

/** Claims in one decide-incidents call, at most: bounds the time Redis spends in one script. */
const GROUP_MAX = 128;

/** A claim's identity and latest arrival as decide-incident.lua takes them: JSON, or "" for none (as a create's record would keep them). */
function shownArgs(claim: IncidentClaim): [string, string] {
  const { identity, latest } = storedShown(claimShown(claim));
  return [identity ?? '', latest ?? ''];
}

/** decide-incident.lua's KEYS and ARGV for one claim (decide-incidents.lua takes them one claim after another; the bench's script ceiling sends them too). */
export function decideArgs(layout: KeyLayout, claim: IncidentClaim, graceMs: number): Omit<Prepared, 'p'> {
  const k = layout.deliveryKeysFor(claim.tenant, claim.key);
  const live = layout.liveIndex(claim.tenant, claim.key);
  return {
    keys: [
      layout.incidentRecordKey(claim.tenant, claim.key),
      k.outbox,
      layout.failingKey('incident', claim.tenant, claim.key),
      k.due,
      layout.resolutionKey(claim.tenant, claim.key),
      live.key,
      layout.incidentShownKey(claim.tenant, claim.key),
    ],
    args: [
      claim.fingerprint,
      claim.ttlMs,
      graceMs,
      ...outboxArgs(claim.tenant, claim.key, claim.outbox),
      k.tag,
      claim.episodeStartedAt ?? '',
      live.member,
      ...shownArgs(claim),
      claim.writer ?? '',
      claim.amends?.episode ?? '',
      claim.amends?.refires ?? '',
      claim.showsOnChange ? '1' : '',
    ],
    tag: k.tag,
  };
}

/** Incidents on Redis: every operation is ONE Lua script, one round trip, on the server's clock; TTLs are Redis's own PX expiries. */
export class RedisIncidents implements SharedIncidentStore {
  private readonly conn: RedisConnection;
  private readonly k: KeyLayout;

  constructor(
    private readonly l: LayoutSeam,
    private readonly graceMs = DEFAULT_EXPIRED_GRACE_MS,
    /** On a cluster a group is one shard's claims: a script's keys must share a slot. */
    private readonly cluster = false,
  ) {
    this.conn = l.conn;
    this.k = l.keys;
  }

  /** Claims waiting for the end of this turn of the event loop. */
  private pending: Pending[] = [];

  /**
   * Claims made in one turn of the event loop (a batch's lines, concurrent
   * requests) are sent together: one decide-incidents call per group instead
   * of one EVALSHA each. Each claim is decided exactly as alone, in arrival
   * order; the group is one atomic step. A group on a cluster is one shard
   * (its keys share a slot); on a single server it is everything pending.
   */
  async decide(claim: IncidentClaim): Promise<IncidentDecisionResult> {
    const count = await this.l.pin(adoptSets.incident(this.k, claim.tenant, claim.key));
    return new Promise((resolve, reject) => {
      this.pending.push({ claim, count, resolve, reject });
      if (this.pending.length === 1) setImmediate(this.flush);
    });
  }

  private readonly flush = (): void => {
    const all = this.pending;
    this.pending = [];
    const groups = new Map<string, Prepared[]>();
    for (const p of all) {
      let prepared: Prepared;
      try {
        // On the count its record was pinned on: a count that moved since makes the claim again (layout-seam.ts).
        prepared = { p, ...this.l.on(p.count, (k) => decideArgs(k, p.claim, this.graceMs)) };
      } catch (err) {
        // That, or its payload cannot be written (JSON.stringify refused it): that claim fails alone.
        p.reject(err);
        continue;
      }
      const g = this.cluster ? prepared.tag : '';
      const list = groups.get(g);
      if (list) list.push(prepared);
      else groups.set(g, [prepared]);
    }
    for (const group of groups.values()) {
      for (let i = 0; i < group.length; i += GROUP_MAX) void this.decideGroup(group.slice(i, i + GROUP_MAX));
    }
  };

  private async decideGroup(group: Prepared[]): Promise<void> {
    if (group.length === 1) {
      const [{ p, keys, args }] = group as [Prepared];
      try {
        p.resolve(await this.result(p.claim, (await this.conn.evalScript(scripts.decideIncident, keys, args)) as DecideReply));
      } catch (err) {
        p.reject(err);
      }
      return;
    }
    let replies: DecideReply[];
    try {
      replies = (await this.conn.evalScript(
        scripts.decideIncidents,
        group.flatMap((g) => g.keys),
        group.flatMap((g) => g.args),
      )) as DecideReply[];
    } catch (err) {
      // The call as a whole failed (the connection, the server refusing everyone): every claim in it did.
      for (const { p } of group) p.reject(err);
      return;
    }
    group.forEach(({ p }, i) => {
      const reply = replies[i]!;
      if (reply[0] === 'error') {
        // A claim's own error, as its own call would have raised it: a data error, so it fails alone.
        const message = String(reply[1]);
        p.reject(new ErrorReply(/^[A-Z]+ /.test(message) ? message : `ERR ${message}`));
      } else this.result(p.claim, reply).then(p.resolve, p.reject);
    });
  }

  private async result(claim: IncidentClaim, reply: DecideReply): Promise<IncidentDecisionResult> {
    const [kind, now, createdAt, refires, updates, previousFingerprint, previousUpdates, stored, identity, latest] = reply;
    const route = decodeRoute(stored);
    if (kind === 'stale') {
      const live = await this.get(claim.tenant, claim.key);
      return staleResult(live, claim, Number(now));
    }
    const outcome: ClaimOutcome =
      kind === 'created'
        ? { kind: 'created' }
        : kind === 'expired'
          ? { kind: 'created', expired: { updates: Number(previousUpdates) } }
          : kind === 'changed'
            ? { kind: 'changed', previousFingerprint, fingerprint: claim.fingerprint }
            : { kind: 'unchanged', createdAt: Number(createdAt), now: Number(now) };
    return {
      outcome,
      record: {
        tenant: claim.tenant,
        key: claim.key,
        fingerprint: claim.fingerprint,
        createdAt: Number(createdAt),
        lastSeenAt: Number(now),
        refires: Number(refires),
        updates: Number(updates),
        expiresAt: Number(now) + claim.ttlMs,
        ...(route ? { route } : {}),
        ...shownOfStored(identity, latest),
      },
    };
  }

  /** The layout the key's record is in now (its record, markers and delivery counters are one record). */
  private at(tenant: string, key: string) {
    return this.l.at(adoptSets.incident(this.k, tenant, key), (k) => k);
  }

  async get(tenant: string, key: string) {
    const k = await this.at(tenant, key);
    const reply = (await this.conn.evalScript(
      scripts.getIncident,
      [k.incidentRecordKey(tenant, key), k.incidentShownKey(tenant, key), k.ackMarkerKey(tenant, key)],
      [],
    )) as [number, string, string, string, string] | null;
    if (!reply) return null;
    const rec = parseRecord(tenant, key, reply[1], reply[2], reply[3]);
    return reply[4] !== '' && Number(reply[4]) === rec.createdAt ? { ...rec, acknowledged: true as const } : rec;
  }

  async close(tenant: string, key: string, resolvedAt?: number, _origin?: Origin, episode?: number) {
    const k = await this.at(tenant, key);
    const live = k.liveIndex(tenant, key);
    const reply = (await this.conn.evalScript(
      scripts.closeIncident,
      [
        k.incidentRecordKey(tenant, key),
        k.outboxKeyFor(tenant, key),
        k.resolutionKey(tenant, key),
        live.key,
        k.incidentShownKey(tenant, key),
        k.closedKey(tenant, key),
      ],
      [tenant, key, resolvedAt ?? '', RESOLUTION_MEMORY_MS, live.member, episode ?? ''],
    )) as [number, string] | null;
    return reply ? parseRecord(tenant, key, reply[1]) : null;
  }

  async acknowledge(tenant: string, key: string, _origin?: Origin, episode?: number) {
    const k = await this.at(tenant, key);
    return (await this.conn.evalScript(
      scripts.acknowledgeIncident,
      [k.incidentRecordKey(tenant, key), k.outboxKeyFor(tenant, key), k.ackMarkerKey(tenant, key)],
      [tenant, key, ACK_MEMORY_MS, episode ?? ''],
    )) as AckOutcome;
  }

  async escalate(tenant: string, key: string, step: EscalationStep) {
    const k = await this.at(tenant, key);
    const entry = outboxEntries.escalated(tenant, key, step, 0);
    return (await this.conn.evalScript(
      scripts.escalateIncident,
      [k.incidentRecordKey(tenant, key), k.outboxKeyFor(tenant, key), k.ackMarkerKey(tenant, key), k.escalationKey(tenant, key)],
      [tenant, key, step.episode, step.step, step.dueAt, encodeRoute(step.to) ?? '', entry.severity, entry.summary, JSON.stringify(entry.data), ACK_MEMORY_MS],
    )) as EscalateOutcome;
  }

  /** Replays one journal entry (fail-open); idempotent per journalId. */
  async reconcile(
    rec: IncidentRecord,
    ttlMs: number,
    journalId: string,
    outbox?: OutboxPayload,
    owed: 'create' | 'update' | null = null,
    arrivedMsAgo = 0,
    writer = '',
    createdMsAgo = arrivedMsAgo,
  ): Promise<ReconcileOutcome> {
    const k = await this.at(rec.tenant, rec.key);
    const live = k.liveIndex(rec.tenant, rec.key);
    const d = k.deliveryKeysFor(rec.tenant, rec.key);
    const shown = storedShown(rec);
    return (await this.conn.evalScript(
      scripts.reconcileIncident,
      [
        k.incidentRecordKey(rec.tenant, rec.key),
        k.reconcileMarkerKey(rec.tenant, rec.key, journalId),
        live.key,
        k.incidentShownKey(rec.tenant, rec.key),
        d.outbox,
        k.closedKey(rec.tenant, rec.key),
      ],
      [
        rec.fingerprint,
        ttlMs,
        this.graceMs,
        rec.refires,
        rec.updates,
        RECONCILE_MARKER_MS,
        live.member,
        encodeRoute(rec.route) ?? '',
        shown.identity ?? '',
        shown.latest ?? '',
        // The route is the live key's (the script's): only the flag and the entry's content go.
        ...outboxArgs(rec.tenant, rec.key, outbox).slice(0, 6),
        owed ?? '',
        d.tag,
        Math.max(0, Math.round(arrivedMsAgo)),
        writer,
        Math.max(0, Math.round(createdMsAgo)),
      ],
    )) as ReconcileOutcome;
  }
}
