import type { Config } from '../config/schema.js';
import type { Clock } from '../core/clock.js';
import { alertSeverity } from '../inputs/alertmanager/severity.js';
import type { Alert, AlertmanagerPayload } from '../inputs/alertmanager/schema.js';
import { ALERTMANAGER_KEY_PREFIX } from '../inputs/store-key.js';
import type { Origin } from '../store/contract/index.js';
import type { Muted } from '../mute/mutes.js';
import type { Deduplicator } from './deduplicator.js';

/** An alert's identity is its fingerprint, in a namespace of its own. */
export const alertKey = (fingerprint: string) => `${ALERTMANAGER_KEY_PREFIX}${fingerprint}`;

export interface AlertOutcome {
  fingerprint: string;
  status: Alert['status'];
  /** `heartbeat`: the alert pinged a heartbeat (a Watchdog) and opened no incident */
  outcome: 'CREATE' | 'SUPPRESS' | 'UPDATE' | 'closed' | 'ignored' | 'stale' | 'heartbeat';
  /** what mutes the alert's key now (a silence, a maintenance window, an inhibiting key), or null */
  muted: Muted | null;
}

/**
 * Prometheus Alertmanager's webhook. Each alert is deduplicated by its
 * fingerprint (never startsAt, externalURL or the group key, which differ
 * between HA peers). `firing` opens or updates; `resolved` closes and records
 * the episode's end, so a peer's late `firing` of that episode (its startsAt
 * no later than that end) is stale and reopens nothing.
 */
/**
 * What the Alertmanager ingest asks of the heartbeats (the monitor in
 * heartbeats/, a layer above, which decides through this engine): the
 * heartbeats an alert pings, and the ping.
 */
export interface HeartbeatPings {
  pingedBy(tenant: string, alertname: string): ReadonlyArray<{ name: string }>;
  ping(tenant: string, name: string): Promise<unknown>;
}

/** How far past this replica's clock a resolved alert's endsAt is believed (an HA peer's clock may run ahead). */
export const RESOLVED_SKEW_MS = 60_000;

export class AlertmanagerIngest {
  constructor(
    private readonly dedup: Deduplicator,
    private readonly config: () => Config,
    private readonly clock: Clock,
    private readonly heartbeats?: HeartbeatPings,
  ) {}

  async apply(p: AlertmanagerPayload, tenant: string, origin?: Origin): Promise<AlertOutcome[]> {
    const out: AlertOutcome[] = [];
    for (const a of p.alerts) out.push({ fingerprint: a.fingerprint, status: a.status, ...(await this.one(a, tenant, origin)) });
    return out;
  }

  private async one(a: Alert, tenant: string, origin?: Origin): Promise<Pick<AlertOutcome, 'outcome' | 'muted'>> {
    // An always-firing alert whose arrival is the point (Prometheus's Watchdog):
    // a ping of the heartbeats that name it, never an incident of its own.
    const pinged = a.labels.alertname === undefined ? [] : (this.heartbeats?.pingedBy(tenant, a.labels.alertname) ?? []);
    if (pinged.length > 0) {
      if (a.status === 'firing') for (const h of pinged) await this.heartbeats!.ping(tenant, h.name);
      return { outcome: 'heartbeat', muted: null };
    }
    const key = alertKey(a.fingerprint);
    if (a.status === 'resolved') {
      const ended = a.endsAt ? Date.parse(a.endsAt) : NaN;
      const now = this.clock.now();
      // A resolved alert carries its end; one without a usable end ends now. An end later than now
      // (past a peer's clock skew) is taken as now: recorded as it came, it would make every firing of
      // the alert until then a "late copy" of the closed episode (stale), hiding a real new fault.
      const resolvedAt = Number.isFinite(ended) && ended > 0 ? Math.min(ended, now + RESOLVED_SKEW_MS) : now;
      return { outcome: (await this.dedup.closeKey(tenant, key, resolvedAt, origin)) ? 'closed' : 'ignored', muted: null };
    }
    const severity = alertSeverity(a.labels.severity);
    const summary = a.annotations.summary ?? a.annotations.description ?? a.labels.alertname ?? a.fingerprint;
    const d = await this.dedup.decide(
      {
        tenant,
        key,
        fingerprint: `${severity}|0`,
        ttlMs: this.config().alertmanager.ttl_seconds * 1000,
        episodeStartedAt: Date.parse(a.startsAt),
        // What GET /v1/incidents/{key} shows: the alert's labels are what identifies it.
        shown: { summary, labels: alertnameFirst(a.labels) },
        outbox: this.dedup.withRoute(tenant, key, {
          severity,
          summary,
          data: {
            fingerprint: a.fingerprint,
            labels: a.labels,
            annotations: a.annotations,
            startsAt: a.startsAt,
            ...(a.generatorURL ? { generatorURL: a.generatorURL } : {}),
          },
        }),
      },
      origin,
    );
    return { outcome: d.reason === 'stale' ? 'stale' : d.decision, muted: d.muted ?? null };
  }
}

/** An alert's labels with `alertname` first, as a person reads an alert (JSON keeps the order). */
function alertnameFirst(labels: Record<string, string>): Record<string, string> {
  if (!Object.hasOwn(labels, 'alertname')) return labels;
  const { alertname, ...rest } = labels;
  return { alertname: alertname!, ...rest };
}
