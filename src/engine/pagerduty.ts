import { randomUUID } from 'node:crypto';
import { type Config, incidentLifetimeMs } from '../config/schema.js';
import type { Severity } from '../core/fingerprint.js';
import type { PdEvent, PdSeverity } from '../inputs/pagerduty/schema.js';
import type { Origin } from '../store/contract/index.js';
import type { Deduplicator } from './deduplicator.js';

/** PagerDuty's four severities onto onceonly's. */
const SEVERITY: Record<PdSeverity, Severity> = { critical: 'CRITICAL', error: 'MAJOR', warning: 'MINOR', info: 'INFO' };

/** PagerDuty's dedup_key lives in a namespace of its own, apart from `dedup:` incident keys. */
export const pagerdutyKey = (dedupKey: string) => `pd:${dedupKey}`;

export type PdOutcome = 'CREATE' | 'SUPPRESS' | 'UPDATE' | 'acknowledged' | 'closed' | 'ignored';

/**
 * PagerDuty Events API v2 semantics on the incident store: a trigger is a
 * decision (severity is the fingerprint: a new severity is an UPDATE); an
 * acknowledge is an update, once per episode; a resolve closes, so the next
 * trigger opens a new incident. A trigger without dedup_key gets one.
 */
export class PagerdutyIngest {
  constructor(
    private readonly dedup: Deduplicator,
    private readonly config: () => Config,
  ) {}

  async apply(e: PdEvent, tenant: string, origin?: Origin): Promise<{ dedup_key: string; outcome: PdOutcome; provisional: boolean }> {
    const dedupKey = e.dedup_key ?? randomUUID().replace(/-/g, '');
    const key = pagerdutyKey(dedupKey);
    if (e.event_action === 'resolve') {
      return { dedup_key: dedupKey, outcome: (await this.dedup.closeKey(tenant, key, undefined, origin)) ? 'closed' : 'ignored', provisional: false };
    }
    if (e.event_action === 'acknowledge') {
      const ack = await this.dedup.acknowledgeKey(tenant, key, 'pagerduty', origin);
      return { dedup_key: dedupKey, outcome: ack === 'acknowledged' ? 'acknowledged' : 'ignored', provisional: false };
    }
    const p = e.payload!;
    const severity = SEVERITY[p.severity];
    const d = await this.dedup.decide(
      {
        tenant,
        key,
        fingerprint: `${severity}|0`,
        ttlMs: incidentLifetimeMs(this.config().incidents),
        // What GET /v1/incidents/{key} shows: PagerDuty's source fields take the labels' place.
        shown: { summary: p.summary, labels: sourceFields(p) },
        outbox: this.dedup.withRoute(tenant, key, {
          severity,
          summary: p.summary,
          data: {
            dedup_key: dedupKey,
            // As sent (critical, error, warning, info): routes and silences match the producer's value.
            severity: p.severity,
            ...sourceFields(p),
            ...(p.timestamp !== undefined ? { timestamp: p.timestamp } : {}),
            ...(p.custom_details !== undefined ? { custom_details: p.custom_details } : {}),
          },
        }),
      },
      origin,
    );
    return { dedup_key: dedupKey, outcome: d.decision, provisional: d.provisional };
  }
}

/** An event's source fields (`source`, and `component`, `group`, `class` where given): what routes and silences match it by. */
function sourceFields(p: NonNullable<PdEvent['payload']>): Record<string, string> {
  return {
    source: p.source,
    ...(p.component !== undefined ? { component: p.component } : {}),
    ...(p.group !== undefined ? { group: p.group } : {}),
    ...(p.class !== undefined ? { class: p.class } : {}),
  };
}
