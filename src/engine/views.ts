import { parseIncidentFingerprint, type Severity } from '../core/fingerprint.js';
import type { IncidentRecord } from '../store/contract/index.js';

/** `GET /v1/incidents/{key}` as docs/api.md gives it. */
export interface IncidentView {
  dedup_key: string;
  severity: Severity;
  cleared: boolean;
  created_at: string;
  last_seen_at: string;
  refires: number;
  updates: number;
  expires_at: string;
}

const iso = (ms: number) => new Date(ms).toISOString();

export function incidentView(rec: IncidentRecord): IncidentView {
  const m = parseIncidentFingerprint(rec.fingerprint);
  return {
    dedup_key: rec.key,
    severity: m.severity,
    cleared: m.cleared,
    created_at: iso(rec.createdAt),
    last_seen_at: iso(rec.lastSeenAt),
    refires: rec.refires,
    updates: rec.updates,
    expires_at: iso(rec.expiresAt),
  };
}
