import { actionOf, violationKey, type Classification, type ViolationAction } from '../core/violation.js';
import { FOREVER_MS, type Config } from '../config/schema.js';
import { parseViolation, type Violation } from '../inputs/violation/schema.js';
import type { DedupStore, Origin } from '../store/contract/index.js';
import { DEFAULT_TENANT } from './deduplicator.js';
import { labelsOf } from '../inputs/labels.js';
import { routeOf } from '../delivery/routing.js';
import type { Muted, MuteSource } from '../mute/mutes.js';

export interface ViolationDecision extends Classification {
  decision: 'CREATE' | 'SUPPRESS';
  key: string;
  /** from the decision table: what a CREATE does (route to ticketing, and page or not, or only log) */
  action: ViolationAction;
  /** set when this re-fire re-queued the key's failing deliveries instead of being suppressed */
  requeued?: true;
  /** what mutes the key's deliveries now; null: nothing */
  muted: Muted | null;
}

/** The rule table in force: a configured rule, else the unknown-rule class. */
export function classify(cfg: Config['violations'], ruleId: string): Classification {
  return Object.hasOwn(cfg.rules, ruleId) ? cfg.rules[ruleId]! : cfg.unknown_rule;
}

/**
 * SPC violations: classify by rule, key by process, rule and time
 * window, claim the key for the window in one atomic step. A claim lives two
 * windows, so a late sample of a window still finds it.
 */
export class ViolationIngest {
  constructor(
    private readonly store: DedupStore,
    private readonly config: () => Config,
    private readonly observe: (v: Violation, d: ViolationDecision, tenant: string) => void = () => {},
    /** What may mute a key now (silences), and the clock its times are on. */
    private readonly mutes?: { source: MuteSource; now: () => number },
  ) {}

  async apply(body: unknown, tenant = DEFAULT_TENANT, origin?: Origin): Promise<ViolationDecision> {
    const v = parseViolation(body);
    const cfg = this.config().violations;
    const cls = classify(cfg, v.rule_id);
    const key = violationKey(v, cfg.window_seconds);
    const act = cfg.actions[cls.severity];
    // A routed alarm goes to the outbox in the claim's own step; a log-only one does not.
    const payload = act.route
      ? {
          severity: cls.severity,
          summary: `${cls.alarm_code} on ${v.process_id} (${v.rule_id})`,
          data: { ...v, alarm_code: cls.alarm_code, notify: act.notify },
        }
      : undefined;
    // A window's one entry goes where the routing tree sends it now.
    const route = payload && routeOf(this.config(), tenant, { kind: 'violation', key, ...payload });
    const outbox = payload && route ? { ...payload, route } : payload;
    const claim = await this.store.windows.claim(tenant, key, cfg.retention === 'forever' ? FOREVER_MS : 2 * cfg.window_seconds * 1000, outbox, origin);
    // A repeat that re-queued a failing delivery is not suppressed: the create goes out again.
    const d: ViolationDecision = {
      decision: claim === 'repeat' ? 'SUPPRESS' : 'CREATE',
      key,
      ...cls,
      action: actionOf(act.route, act.notify),
      ...(claim === 'requeued' ? { requeued: true } : {}),
      muted: await this.mutedNow(tenant, v, cls, key),
    };
    this.observe(v, d, tenant);
    return d;
  }

  /** Matched on what an adapter would receive (the violation, its alarm code and severity), routed or not. */
  private async mutedNow(tenant: string, v: Violation, cls: Classification, key: string): Promise<Muted | null> {
    const m = this.mutes;
    if (!m) return null;
    const labels = labelsOf({ kind: 'violation', key, severity: cls.severity, data: { ...v, alarm_code: cls.alarm_code } });
    // Told, not decided: a store that cannot say now answers null, and the decision stands.
    return Promise.resolve(m.source.mutedBy(tenant, labels, m.now(), key)).catch(() => null);
  }
}
