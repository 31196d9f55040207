import type { ClaimOutcome } from '../../core/decision.js';
import { decodeRoute, encodeRoute, type OutboxPayload } from '../../core/outbox.js';
import type { Origin } from './ledger.js';

/**
 * The incidents facet: claim-or-compare with a sliding TTL, close, and
 * acknowledge. Each operation is ONE atomic step in its backend. The lifetimes
 * every backend keeps are named here and read by all of them.
 */

export interface IncidentRecord {
  tenant: string;
  key: string;
  fingerprint: string;
  createdAt: number;
  lastSeenAt: number;
  /** every arrival after the CREATE */
  refires: number;
  /** the arrivals that were UPDATEs */
  updates: number;
  expiresAt: number;
  /**
   * The adapters the key's create was routed to (absent: every adapter). Kept
   * with the key until it closes or expires: its updates, acknowledgement and
   * close go where its create went, whatever its labels or the config since.
   */
  route?: readonly string[];
  /** What identifies it, as its create received it (an incident's element, fault class and root cause); absent for alerts keyed by their labels. */
  identity?: Readonly<Record<string, string>>;
  /** The latest arrival's summary and labels. */
  latest?: IncidentLatest;
  /** Set by `get` when this episode has been acknowledged (the first acknowledgement of it was stored). */
  acknowledged?: true;
}

/** What a person sees of an incident's latest arrival: its summary, and its labels (an alert's, or PagerDuty's source fields). */
export interface IncidentLatest {
  summary: string;
  labels?: Readonly<Record<string, string>>;
  /** An Opsgenie alert's description (at most 15,000 characters), which its read answers and an edit compares. */
  description?: string;
}

/** What the store keeps of an arrival to show it: the identity a create keeps, and what every arrival replaces. */
export interface IncidentShown extends IncidentLatest {
  identity?: Readonly<Record<string, string>>;
}

export interface IncidentClaim {
  tenant: string;
  key: string;
  fingerprint: string;
  /** sliding TTL: every arrival sets expiry to now + ttlMs */
  ttlMs: number;
  /** written to the outbox in the same step when the decision is a CREATE or an UPDATE */
  outbox?: OutboxPayload;
  /**
   * Alerts with episodes (Alertmanager): when the episode started (ms). If the
   * key's recorded resolution ended at or after it, the claim belongs to a
   * closed episode: outcome `stale`, nothing changes.
   */
  episodeStartedAt?: number;
  /** What `GET /v1/incidents/{key}` shows: a create keeps its identity, every arrival its summary and labels. */
  shown?: IncidentShown;
  /**
   * A shared store: who sends the claim, as a fail-open journal's replay
   * names itself (the journal's id). The store keeps it with the key's last
   * arrival, so a replay can tell its own replica's call, which the store ran
   * only after that replica had given up on it and journaled the arrival, from
   * another replica's later one. Absent: nobody's (no journal).
   */
  writer?: string;
  /**
   * An edit of a named alert (Opsgenie's priority, message and description
   * updates): the record as the edit read it, its episode (`createdAt`) and
   * its arrivals so far (`refires`, which every arrival moves). Decided only
   * on that live episode as read, as an UPDATE even at the same fingerprint
   * (what the alert says changed); another episode, none live, or an arrival
   * since the read is `stale` and changes nothing, so an edit never opens an
   * episode, nor undoes what another arrival or edit wrote meanwhile (the
   * editor reads again and retries). In the store's one step.
   */
  amends?: { episode: number; refires: number };
  /**
   * What the claim shows replaces the latest only when it is a CREATE or an
   * UPDATE: a repeat leaves the alert as its receivers last heard it
   * (Opsgenie's way: a repeat of an open alert counts, and changes neither
   * its message nor its description; an edit does).
   */
  showsOnChange?: boolean;
}

export interface IncidentDecisionResult {
  outcome: ClaimOutcome;
  record: IncidentRecord;
  /** Decided by the fail-open journal because the shared store was unreachable. */
  provisional?: boolean;
}

export type AckOutcome = 'acknowledged' | 'repeat' | 'absent';

/**
 * An escalation step asked of a live episode: written (`escalated`); a step
 * this or later was written before (`done`); not due yet on the store's
 * clock (`early`); the episode was acknowledged (`acknowledged`); or it is
 * not live (`absent`: closed, expired, or another episode now).
 */
export type EscalateOutcome = 'escalated' | 'done' | 'early' | 'acknowledged' | 'absent';

/** What an escalation step sends: a `create` of the key to the step's adapters. */
export interface EscalationStep {
  /** the episode (its record's createdAt) the step is for */
  episode: number;
  /** 1 for the first step */
  step: number;
  /** ms on the store's clock: the step is not written before */
  dueAt: number;
  /** the adapters the step goes to; they join the key's route, so its later changes and its close reach them */
  to: readonly string[];
  severity: string;
  summary: string;
  data: Record<string, unknown>;
}

/**
 * A journal entry's replay: it stood (`claimed`), was a provisional duplicate
 * (`merged`), was replayed before (`done`), or belonged to an episode that was
 * closed after it (`closed`: it changes nothing).
 */
export type ReconcileOutcome = 'claimed' | 'merged' | 'done' | 'closed';

/** How long a resolution is remembered, to recognise a late firing of the episode it closed. */
export const RESOLUTION_MEMORY_MS = 86_400_000;

/**
 * How long an expired record that was never closed is kept, so that the next
 * arrival can be told apart as a premature expiry (`CREATE/expired`).
 */
export const DEFAULT_EXPIRED_GRACE_MS = 600_000;

/**
 * An acknowledgement marker goes with its incident (closed or swept, it goes
 * too) and is never kept longer than this: a store that cannot tie the marker
 * to the record (Redis keys expire alone) gives it this TTL.
 */
export const ACK_MEMORY_MS = 7 * 86_400_000;

/** How long a replayed journal entry's marker is kept: a crashed replay must re-run within it to be recognised. */
export const RECONCILE_MARKER_MS = 86_400_000;

export interface IncidentStore {
  /**
   * Claim the key if absent (or expired); else compare the fingerprint, store
   * the new one, slide the TTL, count the re-fire and re-queue the key's
   * failing deliveries: all in one atomic step.
   */
  decide(claim: IncidentClaim, origin?: Origin): Promise<IncidentDecisionResult>;
  /**
   * `decide` as one synchronous step, on a store whose step never waits (the
   * memory store): the engine can then answer within the request's own turn
   * of the event loop. A store whose step waits (a commit, a round trip)
   * leaves it out, and so does a wrapper that answers asynchronously.
   */
  decideNow?(claim: IncidentClaim, origin?: Origin): IncidentDecisionResult;
  /** The live record, or null when absent or expired; `acknowledged` when its episode was acknowledged. */
  get(tenant: string, key: string): Promise<IncidentRecord | null>;
  /**
   * Close (delete) a live incident, writing a `close` outbox entry in the same
   * step; returns its last record, or null when it was not live. With
   * `resolvedAt` (an alert's episode end, ms) the key's resolution is recorded
   * too (the later of the two when one is already recorded), live or not.
   * With `episode` (a live record's `createdAt`, as an id a client read
   * names it) only that episode is closed: a key in another episode, or none,
   * answers null and nothing changes.
   */
  close(tenant: string, key: string, resolvedAt?: number, origin?: Origin, episode?: number): Promise<IncidentRecord | null>;
  /**
   * The first acknowledgement of a live incident's episode writes an `update`
   * outbox entry; a repeat, or a key that is not live, changes nothing. One
   * atomic step. With `episode`, only that episode (as `close`): another
   * answers `absent`.
   */
  acknowledge(tenant: string, key: string, origin?: Origin, episode?: number): Promise<AckOutcome>;
  /**
   * One escalation step, as one atomic step: when the episode is live, not
   * acknowledged, due, and no step this or later was written for it, records
   * the step, adds its adapters to the key's route and writes its `create`
   * to the outbox. An acknowledgement or a close is the same kind of step on
   * the same key, so no step is written after either, and none twice.
   */
  escalate(tenant: string, key: string, s: EscalationStep): Promise<EscalateOutcome>;
}

/**
 * The incidents facet of a store several replicas share (Redis, Postgres):
 * what fail-open needs beyond the contract. Replaying one journal entry is
 * idempotent per journalId: a key nobody created meanwhile is claimed, a key
 * another replica created is merged (the provisional CREATE counted as one
 * more arrival).
 */
export interface SharedIncidentStore extends IncidentStore {
  /**
   * `outbox`: the journal's latest arrival as an outbox entry. A merge whose
   * fingerprint differs from the live record's is an UPDATE and writes it
   * (with the live key's route) in the same step; so does a merge the
   * journal owes anything for (`owed`), changed or not: the journal held its
   * updates while the store was away, and its provisional create may have
   * reached the receiver after the store's state, or be in flight as the
   * replay drops it. Unless another writer saw the key after the journal's latest
   * arrival: then the store's state is the newer and stays, and goes out
   * again (its severity and summary, the journal's data), since the
   * journal's create, sent during the outage, may have reached the receiver
   * after it. `owed`: what the journal
   * has not delivered for the key (a create, or only updates), which the
   * replay hands to the store. A claim writes a `create` when one is owed,
   * or when the key had creates before (the journal numbered its create 1,
   * and the key's last close may still be queued in the store, to arrive
   * after it); else an `update` when one is owed.
   * `arrivedMsAgo`: how long before the call the journal's latest arrival
   * for the key was. A key closed after that arrival (another replica took
   * the close while this one was on its journal) is not opened again by it:
   * `closed`, nothing written. Measured as an age, not a time, so that a
   * replica whose clock is wrong is not misread; 0 (the default) is an
   * arrival now, after any close.
   * `writer`: the journal's id, as its replica's claims name it (`writer`).
   * The store's state is the newer only when another writer made it: one
   * this journal wrote (its own call the store ran late, or an earlier entry
   * of the key replayed) is never newer than the journal's arrivals.
   * `createdMsAgo`: how long before the call the journal's entry was created
   * (an age, as `arrivedMsAgo`). The key's last arrival becomes the
   * journal's latest (or the store's, when later), never the replay's own
   * time, and a claim's episode starts when the journal's did: so another
   * journal's replay of the key, later, compares its arrivals with when
   * this one's were, not with when it happened to replay. The key stays
   * live `ttlMs` from the call, as the entry was.
   */
  reconcile(
    rec: IncidentRecord,
    ttlMs: number,
    journalId: string,
    outbox?: OutboxPayload,
    owed?: 'create' | 'update' | null,
    arrivedMsAgo?: number,
    writer?: string,
    createdMsAgo?: number,
  ): Promise<ReconcileOutcome>;
}

/**
 * Whether a claim belongs to an episode already resolved: `endedAt` is the
 * key's recorded resolution (or null). Checked inside the claim's own step.
 */
export function isStale(claim: IncidentClaim, endedAt: number | null): boolean {
  return claim.episodeStartedAt !== undefined && endedAt !== null && endedAt >= claim.episodeStartedAt;
}

/** Whether a claim edits a record other than the live one (`live`, or null) as it read it: stale, as isStale. */
export function amendsAnother(claim: IncidentClaim, live: IncidentRecord | null): boolean {
  return claim.amends !== undefined && (live?.createdAt !== claim.amends.episode || live.refires !== claim.amends.refires);
}

/** A stale claim's result: nothing changed; the record is the live one, or an unstored one that is not live. */
export function staleResult(live: IncidentRecord | null, claim: IncidentClaim, now: number): IncidentDecisionResult {
  return {
    outcome: { kind: 'stale' },
    record: live ?? freshRecord(claim, now, now),
  };
}

/** A key's first record: created and seen now, no re-fires yet. */
const freshRecord = (claim: IncidentClaim, now: number, expiresAt: number): IncidentRecord => ({
  tenant: claim.tenant,
  key: claim.key,
  fingerprint: claim.fingerprint,
  createdAt: now,
  lastSeenAt: now,
  refires: 0,
  updates: 0,
  expiresAt,
  ...(claim.outbox?.route ? { route: claim.outbox.route } : {}),
  ...claimShown(claim),
});

/** What a claim shows, as a create's record keeps it: its identity and its latest arrival (nothing when it shows nothing). */
export function claimShown(claim: Pick<IncidentClaim, 'shown'>): Pick<IncidentRecord, 'identity' | 'latest'> {
  const s = claim.shown;
  if (!s) return {};
  return {
    ...(s.identity ? { identity: s.identity } : {}),
    latest: { summary: s.summary, ...(s.labels ? { labels: s.labels } : {}), ...(s.description !== undefined ? { description: s.description } : {}) },
  };
}

/** The latest part of what a claim shows (a later arrival replaces only that). */
const latestOf = (claim: IncidentClaim): { latest?: IncidentLatest } => {
  const { latest } = claimShown(claim);
  return latest ? { latest } : {};
};

/** The pure rule every backend applies inside its atomic step. */
export function nextIncidentRecord(
  /** the stored record, live or expired within the grace */
  existing: IncidentRecord | null,
  claim: IncidentClaim,
  now: number,
): IncidentDecisionResult & { outcome: Exclude<ClaimOutcome, { kind: 'stale' }> } {
  const expiresAt = now + claim.ttlMs;
  if (existing === null || existing.expiresAt <= now) {
    return {
      outcome: existing ? { kind: 'created', expired: { updates: existing.updates } } : { kind: 'created' },
      record: freshRecord(claim, now, expiresAt),
    };
  }
  // An edit of the episode is a change even at the same fingerprint: what the alert says changed.
  const changed = existing.fingerprint !== claim.fingerprint || claim.amends !== undefined;
  return {
    outcome: changed
      ? { kind: 'changed', previousFingerprint: existing.fingerprint, fingerprint: claim.fingerprint }
      : { kind: 'unchanged', createdAt: existing.createdAt, now },
    record: {
      ...existing,
      fingerprint: claim.fingerprint,
      lastSeenAt: now,
      refires: existing.refires + 1,
      updates: existing.updates + (changed ? 1 : 0),
      expiresAt,
      ...(changed || !claim.showsOnChange ? latestOf(claim) : {}),
    },
  };
}

/** A record's identity and latest arrival as a store keeps them: JSON text, or null for none. */
export function storedShown(rec: Pick<IncidentRecord, 'identity' | 'latest'>): { identity: string | null; latest: string | null } {
  return { identity: rec.identity ? JSON.stringify(rec.identity) : null, latest: rec.latest ? JSON.stringify(rec.latest) : null };
}

/** The identity and latest arrival a store kept (storedShown's text), as a record carries them. */
export function shownOfStored(identity: string | null | undefined, latest: string | null | undefined): Pick<IncidentRecord, 'identity' | 'latest'> {
  return {
    ...(identity ? { identity: JSON.parse(identity) as Record<string, string> } : {}),
    ...(latest ? { latest: JSON.parse(latest) as IncidentLatest } : {}),
  };
}

/** An incident row as the SQL stores keep it: the route and what it shows as their stored text. */
export type IncidentRow = Omit<IncidentRecord, 'route' | 'identity' | 'latest'> & { route: string | null; identity: string | null; latest: string | null };

/** The record of a row; the route, identity and latest arrival only when the key has them. */
export function incidentOfRow({ route, identity, latest, ...rest }: IncidentRow): IncidentRecord {
  const r = decodeRoute(route);
  return { ...rest, ...(r ? { route: r } : {}), ...shownOfStored(identity, latest) };
}

/** A record as its row stores it. */
export function rowOfIncident(rec: IncidentRecord): IncidentRow {
  const { route, identity: _i, latest: _l, ...rest } = rec;
  return { ...rest, route: encodeRoute(route), ...storedShown(rec) };
}
