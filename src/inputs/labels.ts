import type { OutboxKind } from '../core/outbox.js';
import { type Labels, RESERVED_LABELS } from '../core/matcher.js';
import { alertSeverity } from './alertmanager/severity.js';
import { ALERTMANAGER_KEY_PREFIX, isAlertmanagerKey } from './store-key.js';

/** What a mute matches against: the kind of input, its severity, and what an adapter receives as data. */
export interface Mutable {
  kind: OutboxKind;
  /** the store key: an incident's dedup_key, a violation's window key, a device */
  key: string;
  /** onceonly's own severity (CRITICAL, MAJOR, MINOR, INFO): the `oo_severity` label */
  severity: string;
  data: Record<string, unknown>;
  /** the caller's tenant: where given, the `tenant` label, whatever a producer sent under that name */
  tenant?: string;
}

/**
 * The labels routes, silences, inhibition, holds and templates match: the
 * labels as the producer sent them. First an alert's own labels, then the
 * input's fields as adapters receive them (`element_id`, `fault_class`,
 * `root_cause_id`; `process_id`, `rule_id`, `alarm_code`; `device_id`;
 * PagerDuty's `source`, `component`, `group`, `class` and `severity`;
 * Opsgenie's `alias`, `priority`, `description` and the labels made of its
 * details, `tags`, `entity` and `source`), a device event's new `state`.
 *
 * `severity` is the producer's: an Alertmanager alert's `severity` label as
 * sent (`critical` stays `critical`; absent stays absent, as Alertmanager
 * matches it), PagerDuty's `payload.severity`, an incident's `severity`
 * field. Inputs that send none (violations, device events, Opsgenie,
 * heartbeats, groups) carry onceonly's there. onceonly's own severity is
 * always `oo_severity`. Then `kind`, `dedup_key` (the store key: one
 * incident, as the dashboard's silence button makes it) and, where the
 * entry names it, `tenant`. Nested objects (details, custom_details) are not
 * labels.
 *
 * Live routing, mutes, templates and the test tools (`routes test`,
 * `POST /v1/routes/test`, simulate) all build labels here, so what a test
 * tool answers is what a live alert does.
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
  // The producer's severity stands (a field of the input's data, or an Alertmanager alert's label);
  // an input that sends none carries onceonly's, and an incident's own field wins over a label of that name.
  if (typeof data.severity !== 'string' && !isAlertmanagerKey(m.key)) out.severity = m.severity;
  out.oo_severity = m.severity;
  out.kind = m.kind;
  out.dedup_key = m.key;
  if (m.tenant !== undefined) out.tenant = m.tenant;
  return out;
}

/**
 * The entry a test tool routes a label set as: the set taken as an
 * Alertmanager alert's labels would be, so that `labelsOf` makes of it what
 * it makes of a live alert, and `routes test`, `POST /v1/routes/test` and
 * simulate answer as live routing does. `oo_severity`, when given, is
 * onceonly's severity; otherwise the sent `severity` is mapped as the
 * Alertmanager input maps it. `kind` and `dedup_key`, when given, say what
 * the entry is; a `tenant` label gives way to the caller's tenant.
 */
export function entryAsSent(sent: Labels, tenant: string): Mutable & { tenant: string } {
  const kinds: readonly string[] = ['incident', 'violation', 'event', 'group'];
  const kind = (kinds.includes(sent.kind ?? '') ? sent.kind : 'incident') as OutboxKind;
  // An incident without a key of its own is taken as an Alertmanager alert: its severity is its label, or none.
  const key = sent.dedup_key ?? (kind === 'incident' ? `${ALERTMANAGER_KEY_PREFIX}routes-test` : 'routes-test');
  const labels: Record<string, string> = {};
  for (const name in sent) if (Object.hasOwn(sent, name) && !RESERVED_LABELS.includes(name)) labels[name] = sent[name]!;
  const data: Record<string, unknown> = { labels };
  if (sent.severity !== undefined) data.severity = sent.severity;
  return { kind, key, severity: sent.oo_severity ?? alertSeverity(sent.severity), data, tenant };
}

/** The labels of `entryAsSent`: what a live alert with these labels is routed and muted by. */
export const labelsAsSent = (sent: Labels, tenant: string): Labels => labelsOf(entryAsSent(sent, tenant));
