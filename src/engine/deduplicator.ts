import { systemClock, type Clock } from '../core/clock.js';
import { RaceWatch } from './race-watch.js';
import { type ClaimOutcome, decideFromOutcome, type Decision, type DecisionReason } from '../core/decision.js';
import { incidentFingerprint } from '../core/fingerprint.js';
import { incidentKey } from '../core/identity.js';
import { isStoreKey, STORE_KEY_RULE } from '../inputs/store-key.js';
import { ValidationError } from '../core/validation.js';
import { FOREVER_MS, configSchema, defaultConfig, type Config, type ConfigInput } from '../config/schema.js';
import { incidentTtlSeconds } from '../inputs/incident/ttl.js';
import { parseIncident } from '../inputs/incident/parse.js';
import type { IncidentInput } from '../inputs/incident/schema.js';
import { parseWith } from '../core/validation.js';
import {
  type AckOutcome,
  fromJsonBody,
  type DedupStore,
  type FlapStore,
  type IncidentClaim,
  type IncidentDecisionResult,
  type Origin,
} from '../store/contract/index.js';
import { flapKeepMs } from '../mute/flapping.js';
import { DEFAULT_STORE_URL, openStore } from '../store/open.js';
import { incidentView, type IncidentView } from './views.js';
import { labelsOf } from '../inputs/labels.js';
import type { OutboxPayload } from '../core/outbox.js';
import { routeOf } from '../delivery/routing.js';
import type { Muted, MuteSource } from '../mute/mutes.js';
import type { Inhibition } from '../mute/inhibition.js';
import type { HistoryRecorder } from '../history/recorder.js';
import { recordDecision } from '../history/decisions.js';

export const DEFAULT_TENANT = 'default';

export interface IncidentDecision {
  decision: Decision;
  reason: DecisionReason;
  dedup_key: string;
  /** true only when the store could not be reached and the service failed open */
  provisional: boolean;
  /** what mutes the key's deliveries now (POST /v1/incidents answers it; null: nothing) */
  muted?: Muted | null;
}

/** Told of what the engine decided (metrics, logs). Must not throw. */
export interface DecisionObserver {
  decided(d: IncidentDecision, tenant: string, origin?: Origin): void;
  /** An incident ended (closed, or found expired by the next arrival) after this many UPDATEs. */
  ended(updates: number, how: 'closed' | 'expired'): void;
}

export interface DeduplicatorOptions {
  store: DedupStore;
  /** Read on every decision, so a config reload takes effect atomically. */
  config?: () => Config;
  observer?: DecisionObserver;
  /** What may mute a key now (silences), and the clock its times are on: answers say whether the key is muted. */
  mutes?: { source: MuteSource; now: () => number };
  /** Inhibition rules' sources, recorded as incidents are decided and forgotten as they close. */
  inhibition?: Pick<Inhibition, 'recordSource' | 'forget' | 'mayMute'>;
  /** Where creates and closes are recorded while flapping or auto-pause is configured, and the clock they are on. */
  flaps?: { store: Pick<FlapStore, 'record'>; now: () => number };
  /** Where each key's decisions and closes are recorded (its history), and the replica that makes them. */
  history?: { recorder: HistoryRecorder; replica: string };
}

const unobserved: DecisionObserver = { decided() {}, ended() {} };

/**
 * The engine behind HTTP, the CLI and library use: validate, derive identity
 * and fingerprint, one atomic store step, a decision with a reason.
 */
export class Deduplicator {
  readonly store: DedupStore;
  private readonly config: () => Config;
  private readonly observer: DecisionObserver;
  private readonly mutes: DeduplicatorOptions['mutes'];
  private readonly inhibition: DeduplicatorOptions['inhibition'];
  private readonly flaps: DeduplicatorOptions['flaps'];
  private readonly history: DeduplicatorOptions['history'];
  /** Which SUPPRESSes raced their CREATE (the lost_race label). */
  private readonly races: RaceWatch;

  constructor(options: DeduplicatorOptions) {
    this.store = options.store;
    // On a store of this process alone (memory, a SQLite file) every copy that could race passes through here.
    this.races = new RaceWatch(!['memory', 'sqlite'].includes(options.store.kind));
    this.mutes = options.mutes;
    this.inhibition = options.inhibition;
    this.flaps = options.flaps;
    this.history = options.history;
    this.config = options.config ?? (() => defaultConfig);
    this.observer = options.observer ?? unobserved;
  }

  /**
   * Validates `input` (throws ValidationError) and decides CREATE / SUPPRESS / UPDATE.
   * `origin` (the request) goes into the audit trail where one is kept.
   */
  async decideIncident(
    input: IncidentInput | unknown,
    tenant = DEFAULT_TENANT,
    origin?: Origin,
    /** `ttlMs`: this incident's lifetime instead of the config's (a missed heartbeat's lasts until closed) */
    options: { ttlMs?: number } = {},
  ): Promise<IncidentDecision> {
    return this.decideIncidentNow(input, tenant, origin, options);
  }

  /**
   * `decideIncident`, answered synchronously when nothing in it waits: a store
   * whose step never waits (memory) and nothing configured that must be
   * awaited (a flap or auto-pause record, an inhibition source, a mute
   * check). Otherwise a promise of the same answer. A bad input throws
   * ValidationError here, not in a promise.
   */
  decideIncidentNow(
    input: IncidentInput | unknown,
    tenant = DEFAULT_TENANT,
    origin?: Origin,
    options: { ttlMs?: number } = {},
  ): IncidentDecision | Promise<IncidentDecision> {
    const incident = parseIncident(input);
    const key = incidentKey(incident);
    const outbox: OutboxPayload = fromJsonBody({
      severity: incident.severity,
      summary: incident.summary ?? '',
      data: {
        element_id: incident.element_id,
        fault_class: incident.fault_class,
        root_cause_id: incident.root_cause_id,
        cleared: incident.cleared,
        ...(incident.details ? { details: incident.details } : {}),
        // Matched as labels by mutes and routes (mute/labels.ts); the identity fields above win a clash.
        ...(incident.labels ? { labels: incident.labels } : {}),
      },
    });
    this.withRoute(tenant, key, outbox);
    const decided = this.decideNow(
      {
        tenant,
        key,
        fingerprint: incidentFingerprint(incident),
        ttlMs: options.ttlMs ?? (this.config().incidents.retention === 'forever' ? FOREVER_MS : incidentTtlSeconds(this.config().incidents, incident) * 1000),
        // What GET /v1/incidents/{key} shows: the identity its create received, the latest summary and labels.
        shown: {
          identity: { element_id: incident.element_id, fault_class: incident.fault_class, root_cause_id: incident.root_cause_id },
          summary: outbox.summary,
          ...(incident.labels ? { labels: incident.labels } : {}),
        },
        // What an adapter will receive if this is a CREATE or an UPDATE (written in the same step).
        outbox,
      },
      origin,
    );
    return decided instanceof Promise ? decided.then((d) => this.withMuted(d, tenant, outbox)) : this.withMuted(decided, tenant, outbox);
  }

  /**
   * The decision with whether it is muted: told, not decided. A store that
   * cannot say now answers null, and the decision stands. With nothing
   * configured that could mute (the common case) no labels are built and
   * nothing is awaited.
   */
  private withMuted(decided: IncidentDecision, tenant: string, outbox: OutboxPayload): IncidentDecision | Promise<IncidentDecision> {
    const m = this.mutes;
    if (!m || m.source.mayMute?.(tenant) === false) {
      decided.muted = null;
      return decided;
    }
    return Promise.resolve(m.source.mutedBy(tenant, labelsOf({ kind: 'incident', key: decided.dedup_key, ...outbox }), m.now(), decided.dedup_key))
      .catch(() => null)
      .then((muted) => {
        decided.muted = muted;
        return decided;
      });
  }

  /**
   * The decision for an already-identified alert (PagerDuty, Alertmanager):
   * the same atomic claim, observed and counted like any incident.
   */
  async decide(given: IncidentClaim, origin?: Origin): Promise<IncidentDecision> {
    const decided = await this.decideNow(given, origin);
    // Whether the key is muted, told as /v1/incidents tells it: the Alertmanager webhook's answer says so too.
    return given.outbox ? this.withMuted(decided, given.tenant, given.outbox) : decided;
  }

  /** `decide`, answered synchronously when nothing in it waits (see decideIncidentNow). */
  decideNow(given: IncidentClaim, origin?: Origin): IncidentDecision | Promise<IncidentDecision> {
    const claim = this.routed(given);
    const arrive = this.races.depart(claim.tenant, claim.key);
    // Settled once, when the claim is back: by the store if it asks (for its audit row), else here.
    let raced: ((claimAgeMs: number) => boolean) | undefined;
    const back = () => (raced ??= arrive());
    const asked: Origin = { ...origin, raced: (age) => back()(age) };
    const store = this.store.incidents;
    if (!store.decideNow) return this.decideLater(claim, asked, origin, back);
    let claimed: IncidentDecisionResult;
    try {
      claimed = store.decideNow(claim, asked);
    } finally {
      back();
    }
    return this.answer(claim, claimed, origin, back());
  }

  /** The claim on a store whose step waits. */
  private async decideLater(claim: IncidentClaim, asked: Origin, origin: Origin | undefined, back: () => (claimAgeMs: number) => boolean) {
    let claimed: IncidentDecisionResult;
    try {
      claimed = await this.store.incidents.decide(claim, asked);
    } finally {
      back();
    }
    return this.answer(claim, claimed, origin, back());
  }

  /** What the store's outcome answers, observed, counted and recorded; a promise only when a record must be awaited. */
  private answer(
    claim: IncidentClaim,
    claimed: IncidentDecisionResult,
    origin: Origin | undefined,
    raced: (claimAgeMs: number) => boolean,
  ): IncidentDecision | Promise<IncidentDecision> {
    const { outcome, provisional } = claimed;
    const decided = decideFromOutcome(outcome, this.config().incidents.race_window_ms, raced);
    // A decision made by the fail-open journal keeps its decision; its reason says how it was made.
    const reason = provisional ? 'provisional' : decided.reason;
    const result: IncidentDecision = { decision: decided.decision, reason, dedup_key: claim.key, provisional: provisional === true };
    if (outcome.kind === 'created' && outcome.expired) this.observer.ended(outcome.expired.updates, 'expired');
    // In the key's history now, before anything is awaited: its events keep the order of the store's steps.
    if (this.history) recordDecision(this.history.recorder, claim, result, outcome, this.history.replica);
    const recorded = outcome.kind === 'created' ? this.transition(claim.tenant, claim.key, 'create') : undefined;
    return recorded ? recorded.then(() => this.settled(claim, result, outcome, origin)) : this.settled(claim, result, outcome, origin);
  }

  /** The decision told to the observer; a live incident that is an inhibition rule's source recorded. */
  private settled(
    claim: IncidentClaim,
    result: IncidentDecision,
    outcome: ClaimOutcome,
    origin: Origin | undefined,
  ): IncidentDecision | Promise<IncidentDecision> {
    this.observer.decided(result, claim.tenant, origin);
    // A live incident that matches an inhibition rule's source is recorded for as long as it lives.
    if (this.inhibition && claim.outbox && outcome.kind !== 'stale' && this.inhibition.mayMute()) return this.sourceRecorded(claim, result);
    return result;
  }

  private async sourceRecorded(claim: IncidentClaim, result: IncidentDecision): Promise<IncidentDecision> {
    await this.inhibition!.recordSource(claim.tenant, claim.key, labelsOf({ kind: 'incident', key: claim.key, ...claim.outbox! }), claim.ttlMs);
    return result;
  }

  /**
   * The claim with the route its create would take (the store keeps it only
   * if this is the create; a live key's changes keep its create's route).
   */
  private routed(claim: IncidentClaim): IncidentClaim {
    const o = claim.outbox;
    if (!o || o.route || !this.config().route) return claim;
    return { ...claim, outbox: this.withRoute(claim.tenant, claim.key, { ...o }) };
  }

  /**
   * A payload of the caller's own making, given the route its create would
   * take, in place (decide then copies nothing): for the ingests that build
   * a fresh payload per arrival.
   */
  withRoute<P extends OutboxPayload>(tenant: string, key: string, payload: P): P {
    const route = this.config().route && routeOf(this.config(), tenant, { kind: 'incident', key, severity: payload.severity, data: payload.data });
    if (route) payload.route = route;
    return payload;
  }

  /** Closes an alert by its store key (no format check), recording its episode's end when given; false when it was not live. */
  async closeKey(tenant: string, key: string, resolvedAt?: number, origin?: Origin, episode?: number): Promise<boolean> {
    const last = await this.store.incidents.close(tenant, key, resolvedAt, origin, episode);
    if (last) this.observer.ended(last.updates, 'closed');
    if (last) await this.inhibition?.forget(tenant, key);
    if (last) await this.transition(tenant, key, 'close');
    if (last)
      this.history?.recorder.record(tenant, key, { type: 'closed', updates: last.updates, ...(resolvedAt !== undefined ? { resolved_at: resolvedAt } : {}) });
    return last !== null;
  }

  /**
   * A create or close, recorded when flapping detection or auto-pause is
   * configured (they read a key's transitions).
   * Beside the decision, not in its step: a record that fails (the store went
   * away) undercounts a flap by one, and the decision stands.
   */
  private transition(tenant: string, key: string, action: 'create' | 'close'): Promise<void> | undefined {
    const c = this.config();
    // Nothing to wait for when neither is configured (the common case): no promise is made.
    if (!this.flaps || (!c.flapping && c.auto_pause.length === 0)) return undefined;
    const keepMs = Math.max(c.flapping ? flapKeepMs(c.flapping) : 0, ...c.auto_pause.map((r) => r.seconds * 1000));
    return this.flaps.store.record(tenant, key, action, this.flaps.now(), keepMs).catch(() => {});
  }

  async getIncident(key: string, tenant = DEFAULT_TENANT): Promise<IncidentView | null> {
    assertKey(key);
    const rec = await this.store.incidents.get(tenant, key);
    return rec ? incidentView(rec) : null;
  }

  /**
   * Acknowledges a live key's episode, whoever says so (the API, PagerDuty,
   * Opsgenie): the first acknowledgement writes an `update` for its adapters
   * in the store's one step, and is recorded in the key's history; a repeat,
   * or a key that is not live (or, with `episode`, not in that episode), changes nothing.
   */
  async acknowledgeKey(tenant: string, key: string, via: AckVia, origin?: Origin, by?: string, episode?: number): Promise<AckOutcome> {
    const outcome = await this.store.incidents.acknowledge(tenant, key, origin, episode);
    if (outcome === 'acknowledged') this.history?.recorder.record(tenant, key, { type: 'acknowledged', via, ...(by !== undefined ? { by } : {}) });
    return outcome;
  }

  /** `POST /v1/incidents/{key}/ack`: `acknowledgeKey` for a key as GET /v1/incidents lists it. */
  async acknowledgeIncident(key: string, tenant = DEFAULT_TENANT, origin?: Origin, by?: string): Promise<AckOutcome> {
    assertKey(key);
    return this.acknowledgeKey(tenant, key, 'api', origin, by);
  }

  /** Live incidents of a tenant, most recently seen first (all kinds of key: incidents, pd:, am:, og:). */
  async listIncidents(tenant: string, limit: number): Promise<IncidentView[]> {
    return (await this.store.queries.listIncidents(tenant, limit)).map(incidentView);
  }

  /** Closes a live incident; the next arrival of its key is a CREATE. False when not live. */
  async closeIncident(key: string, tenant = DEFAULT_TENANT, origin?: Origin): Promise<boolean> {
    assertKey(key);
    return this.closeKey(tenant, key, undefined, origin);
  }

  close(): Promise<void> {
    return this.store.close();
  }
}

/** Who acknowledged a key: onceonly's API, or an integration speaking PagerDuty's or Opsgenie's. */
export type AckVia = 'api' | 'pagerduty' | 'opsgenie';

function assertKey(key: string): void {
  if (!isStoreKey(key)) throw new ValidationError(`invalid dedup_key: ${STORE_KEY_RULE}`, [{ path: 'dedup_key', message: STORE_KEY_RULE }]);
}

export interface OpenOptions {
  /** `memory:` or `sqlite:PATH` (default `sqlite:./data/onceonly.db`). */
  store?: string;
  clock?: Clock;
  /** The same shape as the config file; validated (throws ValidationError). */
  config?: ConfigInput;
}

/** Library entry point: a deduplicator on a store URL. */
export function openDeduplicator(options: OpenOptions = {}): Deduplicator {
  const config = options.config === undefined ? defaultConfig : parseWith(configSchema, options.config, 'config');
  const store = openStore(options.store ?? DEFAULT_STORE_URL, options.clock ?? systemClock, { redisShards: config.redis.shards });
  return new Deduplicator({ store, config: () => config });
}
