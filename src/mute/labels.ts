import type { OutboxKind } from '../core/outbox.js';
import type { Labels } from '../core/matcher.js';

/** What a mute matches against: the kind of input, its severity, and what an adapter receives as data. */
export interface Mutable {
  kind: OutboxKind;
  /** the store key: an incident's dedup_key, a violation's window key, a device */
  key: string;
  severity: string;
  data: Record<string, unknown>;
}

/**
 * The labels a silence matches: an Alertmanager alert's own labels, then the
 * input's fields as adapters receive them (`element_id`, `fault_class`,
 * `root_cause_id`; `process_id`, `rule_id`, `alarm_code`; `device_id`;
 * PagerDuty's `source`, `component`, `group`, `class`; Opsgenie's `alias`,
 * `priority`, `description` and the labels made of its details, `tags`,
 * `entity` and `source`), a device event's new
 * `state`, and `severity`, `kind` and `dedup_key` (the store key: one
 * incident, as the dashboard's silence button makes it). Nested objects (details,
 * custom_details) are not labels.
 */
export function labelsOf(m: Mutable): Labels {
  const out: Record<string, string> = {};
  const alertLabels = m.data.labels;
  // for…in with an own-property check, not Object.entries: this runs on every arrival a route or mute looks at.
  if (alertLabels && typeof alertLabels === 'object' && !Array.isArray(alertLabels)) {
    const given = alertLabels as Record<string, unknown>;
    for (const k in given) {
      const v = given[k];
      if (Object.hasOwn(given, k) && typeof v === 'string') out[k] = v;
    }
  }
  const data = m.data;
  for (const k in data) {
    const v = data[k];
    if (Object.hasOwn(data, k) && (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean')) out[k] = String(v);
  }
  if (m.kind === 'event' && typeof m.data.to === 'string') out.state = m.data.to;
  out.severity = m.severity;
  out.kind = m.kind;
  out.dedup_key = m.key;
  return out;
}
