import type { AutoPauseConfig } from '../config/holds.js';
import type { Delivery, FlapStore } from '../store/contract/index.js';
import type { HoldSource, HoldVerdict } from './holds.js';
import { labelsOf } from '../inputs/labels.js';
import { type CompiledMatcher, matchesAll, parseMatcher } from '../core/matcher.js';

/**
 * Auto-pause: a create whose key matches a rule waits `seconds` from the
 * incident's creation (as the engine recorded it in the flaps facet). If the key closes meanwhile, folding drops the create
 * with its close and nothing is delivered; otherwise it goes out when the
 * pause ends, with the key's latest state. Only creates wait: once a key's
 * create went out, its updates and close go as ever.
 */
export class AutoPause implements HoldSource {
  private compiledFor: AutoPauseConfig | null = null;
  private rules: Array<{ matchers: CompiledMatcher[]; ms: number }> = [];

  constructor(
    private readonly config: () => AutoPauseConfig,
    /**
     * Where the key's creation time is read: its transitions, recorded on the
     * replicas' clock (a folded create carries its latest update's time, and
     * a store's own record of the creation may be on another clock).
     */
    private readonly flaps: Pick<FlapStore, 'history'>,
  ) {}

  private current() {
    const c = this.config();
    if (c !== this.compiledFor) {
      // Checked when the config was loaded; parsing again cannot fail.
      this.rules = c.map((r) => ({ matchers: r.matchers.map((m) => parseMatcher(m)), ms: r.seconds * 1000 }));
      this.compiledFor = c;
    }
    return this.rules;
  }

  async verdict(d: Delivery, now: number): Promise<HoldVerdict> {
    if (d.entry.action !== 'create') return null;
    const rules = this.current();
    if (rules.length === 0) return null;
    const labels = labelsOf(d.entry);
    const i = rules.findIndex((r) => matchesAll(r.matchers, labels));
    if (i < 0) return null;
    // The latest create of the key (a held older one is dropped with its close when it comes due).
    // None kept means it is older than the longest pause, or the store could not say: no pause,
    // a page too early rather than one lost.
    const history = await this.flaps.history(d.entry.tenant, d.entry.key, 0).catch(() => []);
    const created = history.filter((t) => t.action === 'create').at(-1);
    const until = created ? created.at + rules[i]!.ms : 0;
    return now < until ? { hold: { by: 'auto_pause', id: `auto_pause[${i}]`, until } } : null;
  }
}
