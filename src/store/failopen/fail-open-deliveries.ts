import type { Delivery, DeliveryBacklog, DeliveryNear, DeliveryStore, FoldOutcome, Settlement } from '../contract/index.js';
import { StoreUnavailableError, withTimeout } from '../errors.js';

/** Deliveries of decisions made in the local journal carry this prefix on their id. */
const LOCAL = 'local:';
/** Delivery calls are not on the answer path: they get longer, and their failure alone does not fail the store open. */
const TIMEOUT_MS = 5000;

/**
 * How long a journal's delivery waits, held, before it is looked at again:
 * an update while the shared store is away (about four probes, so one that
 * outlives the replay of its key, a replay that set the entry aside, goes
 * out soon after), a create while a restarted replica has not yet heard
 * from the store (about a probe: a fault must still page when it is away).
 */
const WAIT_FOR_STORE_MS = { update: 1000, create: 250 } as const;

const local = (d: Delivery): Delivery => ({ ...d, id: LOCAL + d.id });

/**
 * What of the journal waits for the store. A journal numbers its deliveries
 * of a key from 1, not knowing the store's count: its update of a key the
 * store had updated before would carry a number the store already sent
 * (update:1 after the store's update:3), and a receiver that deduplicates by
 * Idempotency-Key would drop the newer state. So while the store is away the
 * journal sends its creates (a new fault still pages) and holds its updates;
 * the replay hands them to the store, which numbers them after its own, in
 * the key's one line. A replica restarted with entries in its journal also
 * holds their creates until a probe says the store is away: when it answers,
 * the replay hands them over too, and a create decided before the restart
 * never reaches the receiver after the store's newer state of its key.
 */
function waitsForStore(d: Delivery, degraded: boolean, restartedUnheard: boolean): number | null {
  if (d.entry.kind !== 'incident') return null;
  if (d.entry.action === 'update' && degraded) return WAIT_FOR_STORE_MS.update;
  if (d.entry.action === 'create' && restartedUnheard) return WAIT_FOR_STORE_MS.create;
  return null;
}
const byDeath = (a: Delivery, b: Delivery) => (a.deadAt ?? 0) - (b.deadAt ?? 0);

/**
 * Delivery over both stores: the shared one (unless it is down) and the
 * journal, whose outbox holds the entries of provisional decisions. This
 * replica delivers its journal's entries itself; a delivery's id says which
 * store it lives in.
 */
export class FailOpenDeliveries implements DeliveryStore {
  constructor(
    private readonly shared: DeliveryStore,
    private readonly journal: DeliveryStore,
    private readonly degraded: () => boolean,
    /** A replica restarted with journal entries that has not yet heard whether the store is away (see waitsForStore). */
    private readonly restartedUnheard: () => boolean = () => false,
  ) {}

  /**
   * The journal's side always runs; the shared side is skipped while degraded
   * and, when it fails, left for the next pass: a shared store that stopped
   * answering must not hold back the journal's own deliveries.
   */
  async fanOut(adapters: readonly string[], limit: number, near?: DeliveryNear) {
    const n = await this.journal.fanOut(adapters, limit);
    return n + (this.degraded() ? 0 : await withTimeout(this.shared.fanOut(adapters, limit, near), TIMEOUT_MS).catch(() => 0));
  }

  async leaseDue(owner: string, leaseMs: number, limit: number, near?: DeliveryNear) {
    const mine: Delivery[] = [];
    for (const d of await this.journal.leaseDue(owner, leaseMs, limit)) {
      const wait = waitsForStore(d, this.degraded(), this.restartedUnheard());
      if (wait !== null) await this.journal.fold(d, wait);
      else mine.push(local(d));
    }
    if (this.degraded()) return mine;
    return [...mine, ...(await withTimeout(this.shared.leaseDue(owner, leaseMs, limit, near), TIMEOUT_MS).catch(() => []))];
  }

  async fold(d: Delivery, holdMs: number | null): Promise<FoldOutcome> {
    if (!d.id.startsWith(LOCAL)) return withTimeout(this.shared.fold(d, holdMs), TIMEOUT_MS);
    const r = await this.journal.fold({ ...d, id: d.id.slice(LOCAL.length) }, holdMs);
    return r.kind === 'ready' ? { ...r, delivery: local(r.delivery) } : r;
  }

  renew(d: Delivery, leaseMs: number) {
    if (d.id.startsWith(LOCAL)) return this.journal.renew({ ...d, id: d.id.slice(LOCAL.length) }, leaseMs);
    return withTimeout(this.shared.renew(d, leaseMs), TIMEOUT_MS);
  }

  settle(d: Delivery, s: Settlement) {
    if (d.id.startsWith(LOCAL)) return this.journal.settle({ ...d, id: d.id.slice(LOCAL.length) }, s);
    return withTimeout(this.shared.settle(d, s), TIMEOUT_MS);
  }

  async deadLetters(tenant: string | null, limit: number) {
    this.assertShared('list dead letters');
    const [mine, theirs] = await Promise.all([this.journal.deadLetters(tenant, limit), withTimeout(this.shared.deadLetters(tenant, limit), TIMEOUT_MS)]);
    return [...mine.map(local), ...theirs].sort(byDeath).slice(0, limit);
  }

  retryDeadLetter(tenant: string | null, id: string) {
    if (id.startsWith(LOCAL)) return this.journal.retryDeadLetter(tenant, id.slice(LOCAL.length));
    this.assertShared('retry the dead letter');
    return withTimeout(this.shared.retryDeadLetter(tenant, id), TIMEOUT_MS);
  }

  dropDeadLetter(tenant: string | null, id: string) {
    if (id.startsWith(LOCAL)) return this.journal.dropDeadLetter(tenant, id.slice(LOCAL.length));
    this.assertShared('drop the dead letter');
    return withTimeout(this.shared.dropDeadLetter(tenant, id), TIMEOUT_MS);
  }

  /** The journal's backlog, plus the shared store's when it answers (a metrics scrape must not fail). */
  async backlog(): Promise<DeliveryBacklog> {
    const mine = await this.journal.backlog();
    const theirs = this.degraded() ? null : await withTimeout(this.shared.backlog(), TIMEOUT_MS).catch(() => null);
    if (!theirs) return mine;
    const ats = [mine.oldestAt, theirs.oldestAt].filter((x): x is number => x !== null);
    return {
      pending: mine.pending + theirs.pending,
      dead: mine.dead + theirs.dead,
      oldestAt: ats.length ? Math.min(...ats) : null,
      held: mine.held + theirs.held,
    };
  }

  /** The journal's own dead letters always; the shared store's when it answers (a sweep is retried next pass). */
  async sweepDeadLetters(retentionMs: number) {
    const mine = await this.journal.sweepDeadLetters(retentionMs);
    return mine + (this.degraded() ? 0 : await withTimeout(this.shared.sweepDeadLetters(retentionMs), TIMEOUT_MS).catch(() => 0));
  }

  private assertShared(what: string) {
    if (this.degraded()) throw new StoreUnavailableError(`the shared store is unreachable; cannot ${what} now, retry`);
  }
}
