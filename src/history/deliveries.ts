import { isInternalAdapter } from '../delivery/adapter.js';
import type { DeliveryObserver } from '../delivery/worker.js';
import { MUTE_KINDS } from '../mute/kinds.js';
import type { Delivery, Silence } from '../store/contract/index.js';
import type { HistoryRecorder } from './recorder.js';

const isMute = (by: string) => (MUTE_KINDS as readonly string[]).includes(by);

/** Where a delivery event happened: its adapter and the change it carries. */
const where = (d: Delivery) => ({ adapter: d.adapter, action: d.entry.action });

/**
 * The delivery worker's outcomes in their keys' histories: each attempt
 * (with the receiver's ticket where the adapter knows it), dead letters,
 * what muted or held a delivery and its release. Recorded once the store
 * has settled or folded the delivery, so a history never says delivered
 * when it was not. onceonly's own lines (the group line) are not receivers
 * and leave no event.
 */
export function historyObserver(h: HistoryRecorder, silenceOf?: (tenant: string, id: string) => Silence | undefined): DeliveryObserver {
  const record = (d: Delivery, event: Record<string, unknown> & { type: string }) => {
    if (!isInternalAdapter(d.adapter)) h.record(d.entry.tenant, d.entry.key, event);
  };
  return {
    held(d, by, outcome, first) {
      if (outcome === 'dropped') record(d, { type: 'dropped', ...where(d), reason: 'created and closed while held: nothing to deliver' });
      if (outcome !== 'held' || !first) return;
      const s = by.by === 'silence' ? silenceOf?.(d.entry.tenant, by.id) : undefined;
      record(d, {
        type: isMute(by.by) ? 'muted' : 'held',
        by: by.by,
        id: by.id,
        ...where(d),
        ...(by.until !== undefined ? { until: by.until } : s ? { until: s.endsAt } : {}),
        ...(s ? { comment: s.comment, created_by: s.createdBy } : {}),
      });
    },
    released(d, outcome) {
      record(d, { type: 'released', ...where(d), ...(outcome === 'dropped' ? { dropped: true } : {}) });
    },
    settled(d, outcome, reason, detail) {
      const attempt = { type: 'delivery', ...where(d), attempt: d.retries + 1 };
      if (outcome === 'delivered')
        record(d, { ...attempt, status: 'delivered', ...(detail.done ? { detail: detail.done } : {}), ...(detail.ticket ? { ticket: detail.ticket } : {}) });
      else if (outcome === 'retried') record(d, { ...attempt, status: 'failed', reason, error: detail.error, retry_in_ms: Math.round(detail.delayMs ?? 0) });
      else if (outcome === 'dead') {
        record(d, { ...attempt, status: 'failed', reason, error: detail.error });
        record(d, { type: 'dead_letter', ...where(d), id: d.id, reason, error: detail.error });
      }
    },
  };
}
