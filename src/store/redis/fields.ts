import { decodeRoute, type OutboxEntry } from '../../core/outbox.js';

/** Redis's flat [field, value, field, value, …] replies (HGETALL, XRANGE) as an object. */
export function fieldMap(flat: string[]): Record<string, string> {
  const f: Record<string, string> = {};
  for (let i = 0; i < flat.length; i += 2) f[flat[i]!] = flat[i + 1]!;
  return f;
}

/** An outbox entry as the scripts write it, in a stream entry or a delivery hash. */
export function outboxEntryOf(f: Record<string, string>): OutboxEntry {
  return {
    tenant: f.tenant!,
    kind: f.kind as OutboxEntry['kind'],
    action: f.action as OutboxEntry['action'],
    key: f.key!,
    severity: f.severity!,
    summary: f.summary!,
    data: JSON.parse(f.data!) as Record<string, unknown>,
    at: Number(f.at),
    ...(f.route ? { route: decodeRoute(f.route)! } : {}),
  };
}
