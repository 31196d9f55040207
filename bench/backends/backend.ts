/**
 * One store under benchmark: onceonly's own decision on it, the naive algorithm
 * document's algorithm on the same server as the baseline, and the most that
 * server does with one bare statement or script (the ceiling).
 */
import type { OutboxPayload } from '../../src/core/outbox.js';
import type { DedupStore } from '../../src/store/contract/index.js';
import type { IncidentOp } from '../workload.js';

export interface Ceiling {
  /** what the ceiling is, e.g. "redis-benchmark, same script by SHA" */
  label: string;
  /** a per-operation run, when the ceiling is driven from Node (SQL) */
  run?: (op: IncidentOp) => unknown;
  /** operations/s measured by an outside tool (redis-benchmark) over about n operations */
  rate?: (n: number) => number;
}

export interface Backend {
  name: string;
  store: DedupStore;
  /** operations in flight for the concurrent figures */
  inflight: number;
  /** the naive algorithm's multi-step algorithm, written as the naive algorithm has it, on the same server */
  naive: (op: IncidentOp) => unknown;
  ceiling: Ceiling;
  /** anything else worth a row, e.g. the other Redis client */
  extra?: Array<{ label: string; run: (op: IncidentOp) => unknown }>;
  /** rates measured by the server's own tool (no Node client), each once */
  serverSide?: () => Array<{ label: string; rate: number }>;
  close(): Promise<void>;
}

export const TTL_MS = 3_600_000;
export const GRACE_MS = 600_000;
export const TENANT = 'default';

/** What the server writes to the outbox with a CREATE or UPDATE, at a typical size. */
export const OUTBOX: OutboxPayload = {
  severity: 'MAJOR',
  summary: 'link down on core-router-7 ge-0/0/1',
  data: { element_id: 'core-router-7', fault_class: 'LINK_DOWN', root_cause_id: 'rc-4411', cleared: false },
};

export const decide = (store: DedupStore) => (op: IncidentOp) =>
  store.incidents.decide({ tenant: TENANT, key: op.key, fingerprint: op.fp, ttlMs: TTL_MS, outbox: OUTBOX });
