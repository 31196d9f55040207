import type { IngestKind } from '../config/ingest.js';

/**
 * Which messages must be decided one after another, in the order the broker
 * handed them out: those of one incident (its identity fields), one device
 * (tenant and device), one control chart (process and rule). Messages of
 * different keys are decided side by side. An Alertmanager payload carries
 * alerts of many keys, so all of them share one line; a message that is not
 * a JSON object (it will be refused) has a line of its own (`null`).
 *
 * The fields are read as sent, before validation: two messages the key
 * function would give one key have these same fields, so they share a line
 * (the converse need not hold, and costs only parallelism).
 */
export function orderKey(kind: IngestKind, payload: Uint8Array): string | null {
  if (kind === 'alertmanager') return 'alertmanager';
  let body: unknown;
  try {
    body = JSON.parse(Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength).toString('utf8'));
  } catch {
    return null;
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return null;
  const b = body as Record<string, unknown>;
  const fields =
    kind === 'incident' ? [b.element_id, b.fault_class, b.root_cause_id] : kind === 'event' ? [b.tenant_id, b.device_id] : [b.process_id, b.rule_id];
  // JSON of the values keeps "a|b" + "c" apart from "a" + "b|c", and a missing field apart from an empty one.
  return `${kind}:${JSON.stringify(fields)}`;
}
