import type { Silence, SilenceStore } from '../store/contract/index.js';
import { silenceState } from '../store/contract/index.js';
import { type CompiledMatcher, compileMatcher, type Labels, matchesAll, matcherCost } from './matcher.js';
import type { Muted, MuteSource } from './mutes.js';

/** How often a replica asks the store whether the silences changed (one small read). */
export const SILENCE_POLL_MS = 500;

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
  private byTenant = new Map<string, Loaded[]>();
  /** each silence's matchers as last compiled, by tenant and id */
  private compiled = new Map<string, { source: Silence['matchers']; matchers: CompiledMatcher[] }>();
  private loadedVersion: number | null = null;
  private timer: NodeJS.Timeout | null = null;
  private refreshing: Promise<void> | null = null;
  private queued: Promise<void> | null = null;

  constructor(
    private readonly store: SilenceStore,
    private readonly onError: (err: unknown) => void = () => {},
    private readonly pollMs = SILENCE_POLL_MS,
    private readonly snapshot?: SilenceSnapshot,
    /**
     * The replica's clock: with it, a reload reads only the silences that
     * have not ended. A tenant keeps up to 1,000 ended ones (each up to
     * 16 KB) for the API's list, and they mute nothing; reading them again
     * at every write made one tenant's churn cost every other tenant a
     * reload of megabytes. Without it, everything is read.
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
    const all = await this.store.list(null, this.now?.());
    this.install(all);
    this.loadedVersion = v;
    // After the copy is in use: a snapshot that cannot be written costs only a restart during an outage.
    await this.snapshot?.keepSilences(all).catch(this.onError);
  }

  private install(all: readonly Silence[]): void {
    const next = new Map<string, Loaded[]>();
    const compiled = new Map<string, { source: Silence['matchers']; matchers: CompiledMatcher[] }>();
    for (const silence of all) {
      // A silence whose matchers are as at the last load is not compiled again (a reload after each write would
      // otherwise be quadratic). Compared field by field, not as JSON text: with 1,000 silences of 16 KB, making
      // that text was a third of a reload's time.
      const id = `${silence.tenant}\u0000${silence.id}`;
      const before = this.compiled.get(id);
      let matchers = before && sameMatchers(before.source, silence.matchers) ? before.matchers : undefined;
      if (!matchers) {
        try {
          matchers = silence.matchers.map((m) => compileMatcher(m));
        } catch (err) {
          // Checked when it was made; a row that no longer compiles mutes nothing rather than everything.
          this.onError(err);
          continue;
        }
      }
      compiled.set(id, { source: silence.matchers, matchers });
      const list = next.get(silence.tenant) ?? [];
      list.push({ silence, matchers });
      next.set(silence.tenant, list);
    }
    this.byTenant = next;
    this.compiled = compiled;
  }

  /** A tenant's silences as last loaded (those not ended at the load, with a clock): what the dashboard shows, read without the store. */
  async list(tenant: string): Promise<readonly Silence[]> {
    return (this.byTenant.get(tenant) ?? []).map((l) => l.silence);
  }

  mutedBy(tenant: string, labels: Labels, now: number): Muted | null {
    for (const l of this.byTenant.get(tenant) ?? []) {
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
    for (const l of this.byTenant.get(tenant) ?? []) {
      if (l.silence.id !== except && silenceState(l.silence, now) !== 'expired') for (const m of l.silence.matchers) sum += matcherCost(m);
    }
    return sum;
  }

  /** Silences of every tenant that are active at `now`: for the held-delivery gauge and the dashboard. */
  activeCount(now: number): number {
    let n = 0;
    for (const list of this.byTenant.values()) for (const l of list) if (silenceState(l.silence, now) === 'active') n++;
    return n;
  }
}
