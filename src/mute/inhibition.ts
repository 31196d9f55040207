import { createHash } from 'node:crypto';
import type { InhibitionConfig } from '../config/inhibition.js';
import type { IncidentStore, InhibitorStore } from '../store/contract/index.js';
import { type CompiledMatcher, type Labels, labelValue, matchesAll, parseMatcher } from '../core/matcher.js';
import type { Muted, MuteSource } from './mutes.js';

interface Rule {
  /** stable across reloads while the rule is unchanged: what its sources are recorded under */
  id: string;
  source: CompiledMatcher[];
  target: CompiledMatcher[];
  equal: string[];
}

/**
 * Inhibition, as Alertmanager's `inhibit_rules`, with its source held in the
 * shared store: a live incident whose labels match a rule's source is
 * recorded under the rule and its `equal` values when it is decided (and
 * forgotten when it closes); a key matching the rule's target, with the same
 * values, is muted while such an incident is still live. Every replica reads
 * the same records, and a restart forgets none. As in Alertmanager, a key
 * that matches both sides of a rule is inhibited only by sources that match
 * the source side alone (so it never inhibits itself, nor its peers).
 */
export class Inhibition implements MuteSource {
  private compiledFor: InhibitionConfig | null = null;
  private rules: Rule[] = [];

  constructor(
    private readonly config: () => InhibitionConfig,
    private readonly inhibitors: InhibitorStore,
    private readonly incidents: Pick<IncidentStore, 'get'>,
    /** A record that could not be written or removed: the decision stands; a target may then page, never be lost. */
    private readonly onError: (err: unknown) => void = () => {},
    /** True while the shared store is known to be unreachable (failing open). */
    private readonly storeDown: () => boolean = () => false,
  ) {}

  private current(): Rule[] {
    const c = this.config();
    if (c !== this.compiledFor) {
      this.rules = c.map((r) => ({
        id: createHash('sha256')
          .update(JSON.stringify([r.source_matchers, r.target_matchers, r.equal]))
          .digest('hex')
          .slice(0, 16),
        source: r.source_matchers.map((m) => parseMatcher(m)),
        target: r.target_matchers.map((m) => parseMatcher(m)),
        equal: r.equal,
      }));
      this.compiledFor = c;
    }
    return this.rules;
  }

  private static tuple(rule: Rule, labels: Labels): string {
    return JSON.stringify(rule.equal.map((n) => labelValue(labels, n)));
  }

  /** Whether any rule is configured: without one nothing is recorded and nothing inhibited. */
  mayMute(): boolean {
    return this.current().length > 0;
  }

  /** After a decision of `key`: records it as a source of each rule it matches, for its TTL. */
  async recordSource(tenant: string, key: string, labels: Labels, ttlMs: number): Promise<void> {
    for (const r of this.current()) {
      if (!matchesAll(r.source, labels)) continue;
      // A source that also matches the target side is kept apart: it cannot inhibit keys that match both sides.
      const id = matchesAll(r.target, labels) ? `${r.id}*` : r.id;
      await this.inhibitors.put(tenant, id, Inhibition.tuple(r, labels), key, ttlMs).catch(this.onError);
    }
  }

  /** After `key` closed: it inhibits nothing any more. */
  async forget(tenant: string, key: string): Promise<void> {
    if (this.current().length > 0) await this.inhibitors.remove(tenant, key).catch(this.onError);
  }

  /**
   * While the shared store is known to be down (failing open), nothing is
   * inhibited: a page too many, never one lost. A read that fails otherwise
   * (a timeout) throws: the worker then leaves the delivery leased, to be
   * looked at again, rather than send what a live source should mute.
   */
  async mutedBy(tenant: string, labels: Labels, _now: number, key?: string): Promise<Muted | null> {
    try {
      for (const r of this.current()) {
        if (!matchesAll(r.target, labels)) continue;
        // As in Alertmanager: a key matching both sides is inhibited only by sources that match the source side alone.
        const ids = matchesAll(r.source, labels) ? [r.id] : [r.id, `${r.id}*`];
        for (const id of ids) {
          for (const source of await this.inhibitors.find(tenant, id, Inhibition.tuple(r, labels))) {
            if (source === key) continue;
            // The record is a pointer; the incident's own record says whether it is live now.
            if (await this.incidents.get(tenant, source)) return { by: 'inhibition', id: source };
          }
        }
      }
    } catch (err) {
      this.onError(err);
      if (!this.storeDown()) throw err;
    }
    return null;
  }
}
