import { performance } from 'node:perf_hooks';
import type { Silence, SilenceStore } from '../store/contract/index.js';
import { silenceState } from '../store/contract/index.js';
import { type CompiledMatcher, compileMatcher, type Labels, matchesAll, matcherCost } from '../core/matcher.js';
import type { Muted, MuteSource } from './mutes.js';

/** How often a replica asks the store whether the silences changed (one small read). */
export const SILENCE_POLL_MS = 500;
/** The most often a replica writes its copy of the silences into its fail-open journal. */
export const SNAPSHOT_EVERY_MS = 5_000;

interface Loaded {
  silence: Silence;
  matchers: CompiledMatcher[];
}

/** Where a replica keeps the last silences it loaded, for a restart while the store is unreachable (the fail-open journal). */
export interface SilenceSnapshot {
  keepSilences(all: readonly Silence[]): Promise<void>;
  keptSilences(): Silence[] | null;
}

const sameMatchers = (a: Silence['matchers'], b: Silence['matchers']) =>
  a.length === b.length &&
  a.every((m, i) => {
    const o = b[i]!;
    return m.name === o.name && m.value === o.value && m.isRegex === o.isRegex && m.isEqual === o.isEqual;
  });

/**
 * This replica's copy of the silences in the shared store. It polls one
 * number, the store's silence version, and reloads the silences (and compiles
 * their matchers, once) only when that moved: a silence made on any replica
 * mutes here within SILENCE_POLL_MS plus one read. When the store cannot be
 * read, the copy it has keeps muting; a silence must not lapse because Redis
 * blinked. With a snapshot, the copy outlives the process: a replica that
 * starts while the store is unreachable mutes with the copy its predecessor
 * kept.
 */
export class SilenceCache implements MuteSource {
  /** by tenant, then by silence id */
  private byTenant = new Map<string, Map<string, Loaded>>();
  private loadedVersion: number | null = null;
  private timer: NodeJS.Timeout | null = null;
  private refreshing: Promise<void> | null = null;
  private queued: Promise<void> | null = null;
  /** when the copy was last kept in the snapshot (ms, monotonic), and a keep waiting for its turn */
  private keptAt = Number.NEGATIVE_INFINITY;
  private keepTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly store: SilenceStore,
    private readonly onError: (err: unknown) => void = () => {},
    private readonly pollMs = SILENCE_POLL_MS,
    private readonly snapshot?: SilenceSnapshot,
    /**
     * The replica's clock: with it, the copy holds only silences that have
     * not ended, and after the first load a reload reads only the silences
     * written since (the store's `changedSince`). A tenant may hold 1,000
     * open silences of 16 KB and keep 1,000 ended ones; reading them all
     * again at every write made one tenant's churn cost every tenant a
     * reload of megabytes. Without it, every reload reads everything.
     */
    private readonly now?: () => number,
  ) {}

  /** Loads now (from the snapshot, when the store cannot answer), then keeps watching the version. */
  async start(): Promise<void> {
    await this.refresh().catch((err) => {
      this.onError(err);
      const kept = this.snapshot?.keptSilences();
      // Installed without a version: the first poll that reaches the store replaces it.
      if (kept && this.loadedVersion === null) this.install(kept);
    });
    this.timer = setInterval(() => void this.refresh().catch(this.onError), this.pollMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    if (this.keepTimer) {
      clearTimeout(this.keepTimer);
      this.keepTimer = null;
      void this.keep();
    }
  }

  /**
   * Reloads when the version moved. Resolves only after a read
   * that began after this call, so a caller that has just written a silence
   * knows it is applied here; a read already under way may have seen the
   * version before that write, so one further read is queued behind it and
   * shared by every caller that arrives meanwhile.
   */
  refresh(): Promise<void> {
    if (!this.refreshing) {
      this.refreshing = this.load().finally(() => (this.refreshing = null));
      return this.refreshing;
    }
    this.queued ??= this.refreshing
      .catch(() => {})
      .then(() => {
        this.queued = null;
        return this.refresh();
      });
    return this.queued;
  }

  private async load(): Promise<void> {
    const v = await this.store.version();
    if (v === this.loadedVersion) return;
    if (this.loadedVersion === null || this.now === undefined) {
      // The first load (or, without a clock, every one) reads every silence that has not ended.
      this.install(await this.store.list(null, this.now?.()));
      this.loadedVersion = v;
    } else {
      // Then only what was written since: a write costs every replica the silences it changed.
      const changed = await this.store.changedSince(this.loadedVersion);
      this.apply(changed.silences);
      this.loadedVersion = changed.version;
    }
    this.keepSoon();
  }

  /** Replaces the whole copy. */
  private install(all: readonly Silence[]): void {
    const before = this.byTenant;
    this.byTenant = new Map();
    this.apply(all, before);
  }

  /**
   * Puts each silence in the copy (its matchers compiled again only when they
   * changed, compared field by field) and drops those that have ended: they
   * mute nothing. `before` is where compiled matchers are looked up.
   */
  private apply(silences: readonly Silence[], before = this.byTenant): void {
    const now = this.now?.();
    for (const silence of silences) {
      let list = this.byTenant.get(silence.tenant);
      if (now !== undefined && silence.endsAt <= now) {
        list?.delete(silence.id);
        continue;
      }
      const old = before.get(silence.tenant)?.get(silence.id);
      let matchers = old && sameMatchers(old.silence.matchers, silence.matchers) ? old.matchers : undefined;
      if (!matchers) {
        try {
          matchers = silence.matchers.map((m) => compileMatcher(m));
        } catch (err) {
          // Checked when it was made; a row that no longer compiles mutes nothing rather than everything.
          this.onError(err);
          list?.delete(silence.id);
          continue;
        }
      }
      if (!list) this.byTenant.set(silence.tenant, (list = new Map()));
      list.set(silence.id, { silence, matchers });
    }
    if (now !== undefined) {
      for (const [tenant, list] of this.byTenant) {
        for (const [id, l] of list) if (l.silence.endsAt <= now) list.delete(id);
        if (list.size === 0) this.byTenant.delete(tenant);
      }
    }
  }

  /**
   * Keeps the copy in the snapshot after a load, at most every
   * SNAPSHOT_EVERY_MS (the last change waits for its turn): the whole copy
   * is written each time, and churn must not write megabytes per change.
   * The first keep is at once.
   */
  private keepSoon(): void {
    if (!this.snapshot || this.keepTimer) return;
    const wait = this.keptAt + SNAPSHOT_EVERY_MS - performance.now();
    if (wait <= 0) {
      void this.keep();
      return;
    }
    this.keepTimer = setTimeout(() => {
      this.keepTimer = null;
      void this.keep();
    }, wait);
    this.keepTimer.unref();
  }

  private async keep(): Promise<void> {
    this.keptAt = performance.now();
    const all = [...this.byTenant.values()].flatMap((list) => [...list.values()].map((l) => l.silence));
    // After the copy is in use: a snapshot that cannot be written costs only a restart during an outage.
    await this.snapshot?.keepSilences(all).catch(this.onError);
  }

  /** A tenant's silences as last loaded (those not ended at the load, with a clock): what the dashboard shows, read without the store. */
  async list(tenant: string): Promise<readonly Silence[]> {
    return [...(this.byTenant.get(tenant)?.values() ?? [])].map((l) => l.silence);
  }

  /** One silence of a tenant as last loaded: what a key's history says of the silence that muted it. */
  silence(tenant: string, id: string): Silence | undefined {
    return this.byTenant.get(tenant)?.get(id)?.silence;
  }

  /** Whether the tenant has any silence loaded (an ended one too: this is a cheap first look, mutedBy decides). */
  mayMute(tenant: string): boolean {
    return (this.byTenant.get(tenant)?.size ?? 0) > 0;
  }

  mutedBy(tenant: string, labels: Labels, now: number): Muted | null {
    for (const l of this.byTenant.get(tenant)?.values() ?? []) {
      if (silenceState(l.silence, now) === 'active' && matchesAll(l.matchers, labels)) return { by: 'silence', id: l.silence.id };
    }
    return null;
  }

  /**
   * The regex cost (matcher.ts) of a tenant's silences that have not ended,
   * but the one `except` names (a silence being updated): what a new silence
   * adds to is bounded by limits.regex_cost_per_tenant. It reads this
   * replica's copy, fresh after this replica's own writes; one made on another
   * replica within the last poll can be missed, so two replicas writing at
   * once can pass the bound by at most one silence each.
   */
  regexCost(tenant: string, now: number, except?: string): number {
    let sum = 0;
    for (const l of this.byTenant.get(tenant)?.values() ?? []) {
      if (l.silence.id !== except && silenceState(l.silence, now) !== 'expired') for (const m of l.silence.matchers) sum += matcherCost(m);
    }
    return sum;
  }

  /** Silences of every tenant that are active at `now`: for the held-delivery gauge and the dashboard. */
  activeCount(now: number): number {
    let n = 0;
    for (const list of this.byTenant.values()) for (const l of list.values()) if (silenceState(l.silence, now) === 'active') n++;
    return n;
  }
}
