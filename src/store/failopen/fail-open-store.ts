import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Clock } from '../../core/clock.js';
import type {
  DedupStore,
  EpochMark,
  IncidentClaim,
  IncidentRecord,
  OutboxPayload,
  KeptAnswer,
  ReconcileOutcome,
  SharedStore,
  FacetName,
  Facets,
} from '../contract/index.js';
import { FACET_NAMES } from '../contract/index.js';
import { isTransportFault, refusalOf, StoreTimeoutError, StoreUnavailableError, withTimeout } from '../errors.js';

/** How long an epoch look may take: it runs beside the decisions, never under their deadline. */
const EPOCH_TIMEOUT_MS = 5000;
import { wrapFacet } from '../facet.js';
import { FailOpenDeliveries } from './fail-open-deliveries.js';
import type { Journal } from './journal.js';
import { LoopStalls, storeDeadline } from './loop-stalls.js';

export { StoreTimeoutError, StoreUnavailableError } from '../errors.js';

export interface FailOpenEvents {
  /** The shared store stopped (true) or resumed (false) answering. */
  degraded?(degraded: boolean, cause?: unknown): void;
  reconciled?(outcome: ReconcileOutcome | 'expired' | 'quarantined'): void;
  /** The shared store refused a journal entry REPLAY_TRIES times: it is set aside. */
  quarantined?(entry: { tenant: string; key: string }, error: string): void;
  error?(err: unknown, what: string): void;
}

export interface FailOpenOptions {
  /** A decision the store has not answered in this much of its own time makes the replica suspect it (default 50 ms). */
  timeoutMs?: number;
  /** Failures in a row (the late call, then probes one timeout apart) before the replica fails open (default 3). */
  failAfter?: number;
  /** Healthy probes in a row before a degraded replica replays its journal and goes back (default 3). */
  recoverAfter?: number;
  /** A call the store is too slow for while it answers probes, and any list, count or write that has no local answer, fails alone after this (default 5,000 ms). */
  operationTimeoutMs?: number;
  /** After the last outage ended, how long the journal keeps remembering the keys it answered (default 60 s). */
  settleMs?: number;
  /** While degraded, how often the store is probed (default 250 ms). */
  probeIntervalMs?: number;
  /** Entries replayed per journal transaction. */
  batch?: number;
  /** Keys replayed at once (default 16; one key's entries always in order). */
  replayConcurrency?: number;
  events?: FailOpenEvents;
}

type Local = (...args: never[]) => Promise<unknown>;

/** Tries of one journal entry, in one replay pass, before the store's refusal is taken as final. */
export const REPLAY_TRIES = 3;

/** What probing a suspect store concluded: it answers (`up`), or it failed enough times in a row that the replica failed open (`down`). */
type Verdict = 'up' | 'down';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Fail-open: prefer a duplicate to a suppressed outage. When the shared store
 * is unreachable or slower than the timeout, the decision is made in a local
 * durable journal and answered as provisional at once; `ping` (so /readyz)
 * fails while degraded. A probe notices the store's return, and the journal
 * is replayed with an idempotent step: a key nobody else created is claimed,
 * a key another replica created meanwhile is merged (the provisional CREATE
 * was a duplicate, counted). Only when the journal is empty do decisions go
 * back to the shared store, so one key never has a journal entry and a shared
 * record that disagree about what was decided.
 *
 * It wraps facets whole: the operations that can be decided locally are
 * listed here with their local answer; every other operation of every facet,
 * including one added later, must reach the shared store and is refused
 * (503) while it is unreachable.
 */
// The facets the constructor's loop assigns, declared by the facet list rather than one field each:
// a new facet needs no line here unless it answers something locally.
export interface FailOpenStore extends Omit<Facets, 'deliveries'> {}
// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: the constructor's FACET_NAMES loop assigns every facet the interface declares.
export class FailOpenStore implements DedupStore {
  readonly kind: string;
  private degraded = false;
  private inflightJournalWrites = 0;
  private probe: NodeJS.Timeout | null = null;
  /** While healthy: notices entries put back by `onceonly journal retry`. */
  private readonly watch: NodeJS.Timeout;
  private replaying: Promise<void> | null = null;
  /** Restarted with journal entries, and no probe has failed since: the store may well answer (see FailOpenDeliveries). */
  private restartedUnheard = false;
  private closed = false;
  private readonly timeoutMs: number;
  private readonly failAfter: number;
  private readonly recoverAfter: number;
  private readonly operationMs: number;
  private readonly settleMs: number;
  private readonly probeMs: number;
  /** The probing of a suspect store, shared by every call that met it late or refused. */
  private probing: Promise<Verdict> | null = null;
  /** Healthy probes in a row while degraded. */
  private healthyProbes = 0;
  /** When the last outage ended (the journal forgets what it answered settleMs later). */
  private recoveredAt: number | null = null;
  readonly stalls = new LoopStalls();
  /**
   * Who this replica's claims say wrote them (IncidentClaim.writer): its
   * journal's id, hashed to 11 characters, since the store keeps it with
   * every live key (66 bits: two journals never meet on one).
   */
  private readonly writer: string;
  private readonly batch: number;
  private readonly replayConcurrency: number;
  private readonly events: FailOpenEvents;
  // Every other facet is assigned by the FACET_NAMES loop in the constructor (typed by the interface above the class).
  readonly deliveries: FailOpenDeliveries;

  constructor(
    readonly inner: SharedStore,
    readonly journal: Journal,
    private readonly clock: Clock,
    options: FailOpenOptions = {},
  ) {
    this.kind = inner.kind;
    this.writer = createHash('sha256').update(journal.instanceId).digest('base64url').slice(0, 11);
    this.timeoutMs = options.timeoutMs ?? 50;
    this.failAfter = Math.max(1, options.failAfter ?? 3);
    this.recoverAfter = Math.max(1, options.recoverAfter ?? 3);
    this.operationMs = Math.max(this.timeoutMs, options.operationTimeoutMs ?? 5000);
    this.settleMs = options.settleMs ?? 60_000;
    this.probeMs = options.probeIntervalMs ?? 250;
    this.batch = options.batch ?? 500;
    this.replayConcurrency = Math.max(1, options.replayConcurrency ?? 16);
    this.events = options.events ?? {};
    // Each facet's operations that answer locally while the store is away; every other operation
    // of every facet is shared-only (refused while degraded). Why each facet is as it is:
    // - incidents: decided in the journal, provisionally, and replayed. A close or an
    //   acknowledgement must reach the shared store, or a later arrival would be decided
    //   against a record that should have changed: they are refused, as is an edit of a
    //   named episode (a claim that amends one).
    // - windows: a violation is an alarm, claimed in the journal like an incident. Not replayed
    //   (they live one window): a re-fire inside the same window after the store returns may
    //   alarm again.
    // - requests: a producer's Idempotency-Key is held in the journal, so a retry to this replica
    //   replays its answer. Not replayed to the shared store (they live a day): a retry through
    //   another replica after the outage runs again, as without a key.
    // - devices: an event is acknowledged only once applied in the shared store; while it is
    //   away events answer 503 and the producer retries (a duplicate or applied then).
    // - queries: lists and counts have no local answer.
    // - silences: made by people; a new one is refused and replicas keep muting with what they loaded.
    // - inhibitors: a target is not inhibited and a source is not recorded (a page too many,
    //   never one lost).
    // - tickets: the shared record of which ticket a receiver holds for a key; a local copy would
    //   disagree with it after the outage. The adapter falls back to searching its receiver.
    // - heartbeats: a ping is refused (503; the sender pings again); misses are looked for again
    //   once the store is back.
    // - flaps: a transition is not recorded (a flap counted short) and a history read is refused,
    //   which the delivery worker takes as "not flapping" (a page too many, never one lost).
    // - groups: a group's changes wait (the applier's delivery is retried) and are made once it is back.
    // - history: an event is not kept (the recorder counts it lost: a line missing from a key's
    //   history, never one that says what did not happen) and a read is refused.
    // - deliveries: both sides at once (fail-open-deliveries.ts).
    const local: { [F in FacetName]?: Record<string, Local> } = {
      incidents: {
        decide: async (claim: IncidentClaim) => {
          // An edit of a named episode is decided against the shared record of it, which the journal
          // does not hold: refused (503), so the sender tries again, rather than dropped as stale.
          if (claim.amends !== undefined) throw new StoreUnavailableError('the shared store is unreachable, and an edit of a named alert needs it: retry');
          this.inflightJournalWrites++;
          try {
            // A key this replica answered earlier in this outage (a flapping store) is a repeat, not a second
            // CREATE: restored, decided and remembered in one journal write, so a replay pass cannot slip between.
            const result = await journal.decideRemembering(claim);
            return { ...result, provisional: true };
          } finally {
            this.inflightJournalWrites--;
          }
        },
        get: async (tenant: string, key: string) => {
          const kept = await journal.incidents.get(tenant, key);
          if (kept) return kept;
          throw new StoreUnavailableError('the shared store is unreachable and this replica has no local record of the incident');
        },
      },
      windows: {
        claim: (tenant: string, key: string, ttlMs: number, outbox?: OutboxPayload) => journal.windows.claim(tenant, key, ttlMs, outbox),
      },
      requests: {
        begin: (tenant: string, key: string, bodyHash: string, leaseMs: number, maxKeys: number) =>
          journal.requests.begin(tenant, key, bodyHash, leaseMs, maxKeys),
        finish: (tenant: string, key: string, bodyHash: string, answer: KeptAnswer, keepMs: number, maxBytes: number) =>
          journal.requests.finish(tenant, key, bodyHash, answer, keepMs, maxBytes),
        abandon: (tenant: string, key: string, bodyHash: string) => journal.requests.abandon(tenant, key, bodyHash),
      },
    };
    const self = this as unknown as Record<FacetName, unknown>;
    for (const name of FACET_NAMES) if (name !== 'deliveries') self[name] = this.facet(name, inner[name] as object, local[name] ?? {});
    this.deliveries = new FailOpenDeliveries(
      inner.deliveries,
      journal.deliveries,
      () => this.degraded,
      () => this.restartedUnheard,
    );
    // Entries left by an earlier run (an outage, then a crash) are replayed first; until a probe
    // says the store is away, their creates wait for that replay too (fail-open-deliveries.ts).
    if (journal.size() > 0) {
      this.degrade(new Error('journal holds entries from an earlier run'));
      this.restartedUnheard = true;
    }
    // An entry an operator put back from quarantine is replayed while healthy:
    // the replay is the same idempotent merge another replica's decisions race with.
    this.watch = setInterval(() => {
      if (this.degraded || this.closed) return;
      if (this.journal.size() > 0) this.replaying ??= this.tryRecover().finally(() => (this.replaying = null));
      else if (this.recoveredAt !== null && this.clock.now() - this.recoveredAt >= this.settleMs) {
        // The store has answered for a whole settle period: the outage is over, and so is the journal's memory of it.
        this.recoveredAt = null;
        this.journal.forgetAnswered().catch((err) => this.events.error?.(err, 'journal memory'));
      }
    }, this.probeMs * 4);
    this.watch.unref();
  }

  /** `inner` with each operation in `local` failing open to its local answer, and every other one shared-only. */
  private facet<T extends object>(name: string, inner: T, local: Record<string, Local>): T {
    return wrapFacet(inner, (method, call, args) => {
      // A claim names this journal as its writer: should the store run it only after this replica gave up
      // on it (and journaled the arrival), the replay knows that state for its own, not a later one's.
      if (name === 'incidents' && method === 'decide') args[0] = { ...(args[0] as IncidentClaim), writer: this.writer };
      const fallback = local[method];
      return fallback ? this.sharedOrLocal(call, () => fallback(...(args as never[]))) : this.shared(`${name}.${method}`, call);
    });
  }

  /** Prepares the shared store (Postgres: migrations); it must answer for that. */
  async init(): Promise<void> {
    await this.inner.init?.();
  }

  /** The shared store's marker: only the shared store can say whether it lost data (a failure is its own). */
  tickEpoch(): Promise<EpochMark> {
    return withTimeout(this.inner.tickEpoch(), EPOCH_TIMEOUT_MS);
  }

  get isDegraded(): boolean {
    return this.degraded;
  }

  /**
   * Asks the shared store; answers locally only once the replica has failed
   * open. A call the store has not answered within the timeout (of the
   * store's own time: see loop-stalls.ts) makes the replica suspect the
   * store, and the call waits on: for its own answer, or for the probes'
   * verdict. Only `failAfter` failures in a row fail the replica open, so one
   * slow answer, or a burst of them from one stall, never does. A call is
   * never sent twice: a second try could find the first one's CREATE.
   */
  private async sharedOrLocal<T>(shared: () => Promise<T>, local: () => Promise<T>): Promise<T> {
    if (this.degraded) return local();
    const attempt = shared();
    let err: unknown;
    try {
      return await storeDeadline(attempt, this.timeoutMs, this.stalls);
    } catch (e) {
      err = e;
    }
    // The store answered, and refused this request: it fails alone.
    if (!isTransportFault(err)) throw refusalOf(err);
    if (err instanceof StoreTimeoutError) {
      const late = await this.lateAnswer(attempt, err);
      if (late.kind === 'answer') return late.value;
      return local();
    }
    return this.afterBrokenCall(err, local);
  }

  /**
   * A call whose connection failed on the way: it may or may not have been
   * decided on the store. If the store is gone the replica fails open and
   * answers locally (the replay merges what did land). If the store answers
   * again, the call is not made a second time, which would answer SUPPRESS to
   * the very request whose first try made the CREATE: it fails alone (503),
   * and the producer's retry learns what happened.
   */
  private async afterBrokenCall<T>(err: unknown, local: () => Promise<T>): Promise<T> {
    if ((await this.suspect(err)) === 'down') return local();
    throw new StoreUnavailableError(
      `the connection to the shared store failed during this request, which may have been decided; retry: ${(err as Error).message}`,
    );
  }

  /** A call past its timeout: its own answer, or the verdict on the store, whichever comes first. */
  private async lateAnswer<T>(attempt: Promise<T>, timeout: StoreTimeoutError): Promise<{ kind: 'answer'; value: T } | { kind: 'down' }> {
    const answered = attempt.then(
      (value) => ({ kind: 'answer' as const, value }),
      (error: unknown) => ({ kind: 'failed' as const, error }),
    );
    const first = await Promise.race([answered, this.suspect(timeout).then((v) => ({ kind: v }))]);
    if (first.kind === 'answer') return first;
    if (first.kind === 'down') return { kind: 'down' };
    if (first.kind === 'failed') {
      if (!isTransportFault(first.error)) throw refusalOf(first.error);
      await this.afterBrokenCall(first.error, async () => undefined);
      return { kind: 'down' };
    }
    // The store answers probes, yet not this call: it is slow for this call's
    // own reasons (its data, a lock); it gets the operation's deadline and then
    // fails alone, never the replica open.
    try {
      return { kind: 'answer', value: await storeDeadline(attempt, this.operationMs - this.timeoutMs, this.stalls) };
    } catch (error) {
      if (!isTransportFault(error)) throw refusalOf(error);
      throw new StoreUnavailableError(`the shared store answers, but not this request within ${this.operationMs} ms; retry: ${(error as Error).message}`);
    }
  }

  /**
   * A call met the store late or refused: probe it, one timeout apart,
   * until it answers (`up`) or `failAfter` failures in a row (the call's
   * own counts as the first) fail the replica open (`down`). Every call that
   * meets the store so meanwhile waits on the same probing, so a burst of
   * late answers is one failure, not many.
   */
  private suspect(cause: unknown): Promise<Verdict> {
    if (this.degraded) return Promise.resolve('down');
    this.probing ??= this.probeSuspect(cause).finally(() => (this.probing = null));
    return this.probing;
  }

  private async probeSuspect(cause: unknown): Promise<Verdict> {
    for (let failures = 1; !this.closed && !this.degraded; failures++) {
      if (failures >= this.failAfter) {
        this.degrade(cause);
        return 'down';
      }
      const started = performance.now();
      try {
        await storeDeadline(this.probeOnce(), this.timeoutMs, this.stalls, 'the shared store (probe)');
        return 'up';
      } catch (err) {
        if (!isTransportFault(err)) return 'up';
        cause = err;
      }
      // A refusal at once (no connection) is asked again a timeout later, so the failures span time.
      const left = this.timeoutMs - (performance.now() - started);
      if (left > 0) await sleep(left);
    }
    return this.degraded ? 'down' : 'up';
  }

  /**
   * Only the shared store will do: while it is unreachable the call is
   * refused (503). Such calls (lists, counts, silences, groups, writes
   * without a local answer) are not on a decision's deadline: each has the
   * operation's, and past it, or on any failure, it fails alone. A refused
   * connection makes the replica probe the store; a slow answer does not,
   * since how long a list takes grows with its data, not with the store's health.
   */
  private async shared<T>(what: string, call: () => Promise<T>): Promise<T> {
    if (this.degraded) throw new StoreUnavailableError(`the shared store is unreachable; cannot run ${what} now, retry`);
    try {
      return await storeDeadline(call(), this.operationMs, this.stalls, `the shared store (${what})`);
    } catch (err) {
      if (!isTransportFault(err)) throw refusalOf(err);
      if (!(err instanceof StoreTimeoutError)) this.suspect(err).catch(() => {});
      throw new StoreUnavailableError(`the shared store did not answer; cannot run ${what} now, retry: ${(err as Error).message}`);
    }
  }

  sweepExpired() {
    return this.inner.sweepExpired();
  }

  /** One health probe: the store's own probe when it has one (a connection that does not queue behind this replica's work). */
  private probeOnce(): Promise<void> {
    return this.inner.probeHealth ? this.inner.probeHealth() : this.inner.ping();
  }

  async ping() {
    if (this.degraded) {
      throw new StoreUnavailableError(`failing open: ${this.journal.size()} journaled decision(s) wait for the store`);
    }
    // /readyz: a readiness probe answers promptly (ten decision timeouts of the store's own time), as it did before.
    await storeDeadline(this.inner.ping(), this.timeoutMs * 10, this.stalls, 'the shared store (ping)');
  }

  async close() {
    this.closed = true;
    this.stalls.stop();
    if (this.probe) clearInterval(this.probe);
    clearInterval(this.watch);
    // A probe in flight when the store is gone never comes due once the stall meter stops (see
    // LoopStalls.stop): wait for it a while, not for ever, or a replica whose store is unreachable
    // (an untrusted TLS certificate, say) never exits on SIGTERM.
    if (this.replaying) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([this.replaying.catch(() => {}), new Promise<void>((r) => (timer = setTimeout(r, this.operationMs)))]);
      clearTimeout(timer);
    }
    await this.inner.close();
    await this.journal.close();
  }

  private degrade(cause: unknown): void {
    if (this.degraded || this.closed) return;
    this.degraded = true;
    this.healthyProbes = 0;
    this.events.degraded?.(true, cause);
    this.probe = setInterval(() => {
      this.replaying ??= this.tryRecover().finally(() => (this.replaying = null));
    }, this.probeMs);
    this.probe.unref();
  }

  /** Probe; after `recoverAfter` healthy answers in a row, replay the journal; when it is empty, switch back. */
  private async tryRecover(): Promise<void> {
    if (this.closed) return;
    try {
      await storeDeadline(this.probeOnce(), this.timeoutMs, this.stalls, 'the shared store (probe)');
    } catch {
      this.healthyProbes = 0;
      this.restartedUnheard = false; // the store is away: the journal's creates page
      return;
    }
    // A store that flaps between answering and not is not back: one answer between two silences does not end the outage.
    if (this.degraded && ++this.healthyProbes < this.recoverAfter) return;
    try {
      await this.replayParked();
      for (let rows = await this.journal.takeBatch(this.batch); rows.length > 0; rows = await this.journal.takeBatch(this.batch)) {
        await this.replayParked();
      }
    } catch (err) {
      this.events.error?.(err, 'journal replay');
      return;
    }
    // Synchronous from here: no journal write can slip in between the check and the switch.
    if (this.degraded && this.journal.size() === 0 && this.inflightJournalWrites === 0 && !this.closed) {
      this.degraded = false;
      this.restartedUnheard = false;
      this.healthyProbes = 0;
      this.recoveredAt = this.clock.now();
      if (this.probe) clearInterval(this.probe);
      this.probe = null;
      this.events.degraded?.(false);
    }
  }

  /**
   * Replays the parked entries, `replayConcurrency` keys at a time: one after
   * another, a replay of a few hundred keys took seconds of round trips, and
   * the replica stays off the store (and not ready) until it ends. Keys are
   * independent (each replay is its own atomic step on its own key); one
   * key's entries go in order. A transport fault ends the pass (the store is
   * gone again; the entries not replayed stay parked).
   */
  private async replayParked(): Promise<void> {
    const lines = new Map<string, IncidentRecord[]>();
    for (const rec of this.journal.parked()) {
      const id = `${rec.tenant}\u0000${rec.key}`;
      const line = lines.get(id);
      if (line) line.push(rec);
      else lines.set(id, [rec]);
    }
    const queue = [...lines.values()];
    let fault: unknown = null;
    const worker = async () => {
      for (let line = queue.shift(); line && fault === null; line = queue.shift()) {
        for (const rec of line) await this.replayOne(rec);
      }
    };
    await Promise.all(
      Array.from({ length: Math.min(this.replayConcurrency, queue.length) }, () =>
        worker().catch((err: unknown) => {
          fault ??= err;
        }),
      ),
    );
    if (fault !== null) throw fault;
  }

  /**
   * Replays one parked entry. An entry the store refuses for its data is
   * tried REPLAY_TRIES times, then quarantined with the reason, so it never
   * blocks the entries behind it nor keeps the replica degraded past this
   * pass. A transport fault is thrown.
   */
  private async replayOne(rec: IncidentRecord): Promise<void> {
    let refusal: unknown = null;
    for (let tried = 0; tried < REPLAY_TRIES; tried++) {
      try {
        const now = this.clock.now();
        const outcome =
          rec.expiresAt <= now
            ? 'expired'
            : // What the journal still owes the receivers for the key goes to the store with the replay, and
              // the store's line carries it in order with the store's own decisions. A repeat answered from
              // the journal's memory made no create: if the store no longer holds the key live (closed
              // meanwhile), this arrival is a new fault, and its create is owed too.
              await storeDeadline(
                this.inner.incidents.reconcile(
                  rec,
                  rec.expiresAt - now,
                  this.journal.entryId(rec),
                  this.journal.latestOutbox(rec),
                  this.journal.restoredClaim(rec) !== null ? 'create' : this.journal.owed(rec),
                  // Its age on this replica's clock: a close another replica took after it ends its episode.
                  now - rec.lastSeenAt,
                  this.writer,
                  now - rec.createdAt,
                ),
                this.operationMs,
                this.stalls,
              );
        if (outcome !== 'expired') await this.journal.dropOwed(rec);
        this.events.reconciled?.(outcome);
        refusal = null;
        break;
      } catch (err) {
        if (isTransportFault(err)) throw err;
        refusal = err;
      }
    }
    if (refusal === null) {
      await this.journal.forget(rec);
      return;
    }
    const reason = refusal instanceof Error ? refusal.message : String(refusal);
    await this.journal.quarantine(rec, reason);
    this.events.reconciled?.('quarantined');
    this.events.quarantined?.({ tenant: rec.tenant, key: rec.key }, reason);
  }
}
