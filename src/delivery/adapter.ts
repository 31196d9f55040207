import { INTERNAL_PREFIX, type OutboxEntry, type OutboxKind } from '../core/outbox.js';

/** One delivery as an adapter sees it. */
export interface DeliveryJob {
  entry: OutboxEntry;
  /** `key:action:n`: the same for every retry of this delivery. */
  idempotencyKey: string;
  /** 1 for the first try of this delivery since it was (re)queued */
  attempt: number;
}

export type AdapterResult =
  | {
      ok: true;
      /** what it did, in a few words (`created INC0010001`) */
      detail?: string;
      /** the ticket at the receiver, where known: a key's history shows it */
      ticket?: Readonly<Record<string, string>>;
    }
  | {
      ok: false;
      /** 408, 429, 5xx and network errors are worth retrying; anything else is parked at once. */
      retryable: boolean;
      /** short and closed, for the metric's reason label: http_503, network, timeout, … */
      reason: string;
      error: string;
      /** the destination's `Retry-After`, when it gave one */
      retryAfterMs?: number;
    };

/**
 * onceonly's own lines (the group line: gate/group-stage.ts) are fanned out
 * and leased like destinations' and pass the same stages; they are named
 * with this prefix, which no configured adapter's name may carry. Only the
 * dashboard's adapter table leaves them out.
 */
export { INTERNAL_PREFIX };

/** Whether `name` is one of onceonly's own lines rather than a configured destination. */
export const isInternalAdapter = (name: string) => name.startsWith(INTERNAL_PREFIX);

export interface Adapter {
  readonly name: string;
  readonly type: string;
  /** How long one call may take: the worker starts no call it could not finish inside its lease. */
  readonly timeoutMs?: number;
  /** Whether this entry is for this adapter at all (its kinds, and for paging channels the decision table). */
  accepts(entry: OutboxEntry): boolean;
  /** Must upsert by the entry's key: a repeat of a delivery that already landed changes nothing. Never throws. */
  deliver(job: DeliveryJob): Promise<AdapterResult>;
  close?(): Promise<void>;
}

export const ALL_KINDS: readonly OutboxKind[] = ['incident', 'violation', 'event'];

/** A paging channel takes a violation only when the decision table says it pages (`data.notify`). */
export const pages = (e: OutboxEntry) => e.kind !== 'violation' || e.data.notify === true;
