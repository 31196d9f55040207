import { parseIncidentFingerprint, type Severity } from '../core/fingerprint.js';
import type { IncidentRecord } from '../store/contract/index.js';

/** `GET /v1/incidents/{key}` as docs/api.md gives it. */
export interface IncidentView {
  dedup_key: string;
  /** the identity fields as its create received them (incidents posted to /v1/incidents) */
  element_id?: string;
  fault_class?: string;
  root_cause_id?: string;
  /** the latest arrival's summary */
  summary: string;
  /** the latest arrival's labels: an incident's own, an Alertmanager alert's, or PagerDuty's source fields */
  labels: Record<string, string>;
  severity: Severity;
  cleared: boolean;
  created_at: string;
  last_seen_at: string;
  refires: number;
  updates: number;
  expires_at: string;
}

const iso = (ms: number) => new Date(ms).toISOString();

const IDENTITY_FIELDS = ['element_id', 'fault_class', 'root_cause_id'] as const;
/** Those of `names` that `from` holds as its own strings. */
const pick = <K extends string>(from: Readonly<Record<string, string>> | undefined, names: readonly K[]): Partial<Record<K, string>> =>
  Object.fromEntries(names.flatMap((n) => (from && Object.hasOwn(from, n) && typeof from[n] === 'string' ? [[n, from[n]]] : []))) as Partial<Record<K, string>>;

export function incidentView(rec: IncidentRecord): IncidentView {
  const m = parseIncidentFingerprint(rec.fingerprint);
  return {
    dedup_key: rec.key,
    ...pick(rec.identity, IDENTITY_FIELDS),
    summary: rec.latest?.summary ?? '',
    labels: { ...rec.latest?.labels },
    severity: m.severity,
    cleared: m.cleared,
    created_at: iso(rec.createdAt),
    last_seen_at: iso(rec.lastSeenAt),
    refires: rec.refires,
    updates: rec.updates,
    expires_at: iso(rec.expiresAt),
  };
}
