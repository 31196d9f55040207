import type { HoldKind, MuteKind } from '../mute/kinds.js';
import type { Delivery, FoldOutcome } from '../store/contract/index.js';

export type DeliveryOutcome = 'delivered' | 'retried' | 'dead' | 'skipped' | 'lost_lease';

/** What the worker reports (metrics and logs hang off this). */
export interface DeliveryObserver {
  attempted?(adapter: string): void;
  settled?(d: Delivery, outcome: DeliveryOutcome, reason: string, detail: SettledDetail): void;
  error?(err: unknown, what: string): void;
  /** A mute or a hold held a delivery (`first`: it was not held before), or what folding it did instead. */
  held?(d: Delivery, by: HeldBy, outcome: FoldOutcome['kind'], first: boolean): void;
  /** Nothing mutes a held delivery any more: it goes out now (`ready`), or folding found it had to go. */
  released?(d: Delivery, outcome: FoldOutcome['kind']): void;
  /**
   * A pass fanned out, found nothing due and had no call in flight: the worker
   * is caught up. (Something muted, backing off or not yet due may still wait.)
   */
  idle?(): void;
}

/** How a delivery settled: the backoff before a retry, the error, the call's time, and a success's own words and the receiver's ticket. */
export interface SettledDetail {
  delayMs?: number;
  error?: string;
  seconds: number;
  /** what the adapter said it did (`created INC0010001`) */
  done?: string;
  /** the ticket at the receiver, where the adapter knows it (ServiceNow number and sys_id, Jira issue key, PagerDuty dedup_key) */
  ticket?: Readonly<Record<string, string>>;
}

/** What held a delivery: a mute or a hold (mute/kinds.ts names them), and which one. */
export type HeldBy = { by: MuteKind | HoldKind; id: string /** when the hold ends, where it is known (ms) */; until?: number };
