import { systemClock, type Clock } from '../core/clock.js';
import { decideFromOutcome, type Decision, type DecisionReason } from '../core/decision.js';
import { incidentFingerprint } from '../core/fingerprint.js';
import { INCIDENT_KEY_PATTERN, incidentKey } from '../core/identity.js';
import { ValidationError } from '../core/validation.js';
import { configSchema, defaultConfig, type Config, type ConfigInput } from '../config/schema.js';
import { incidentTtlSeconds } from '../inputs/incident/ttl.js';
import { parseIncident, parseWith, type IncidentInput } from '../inputs/incident/schema.js';
import type { DedupStore } from '../store/contract.js';
import { DEFAULT_STORE_URL, openStore } from '../store/open.js';
import { incidentView, type IncidentView } from './views.js';

export const DEFAULT_TENANT = 'default';

export interface IncidentDecision {
  decision: Decision;
  reason: DecisionReason;
  dedup_key: string;
  /** true only when the store could not be reached and the service failed open */
  provisional: boolean;
}

export interface DeduplicatorOptions {
  store: DedupStore;
  /** Read on every decision, so a config reload takes effect atomically. */
  config?: () => Config;
  /** Told of every decision (metrics, logs); must not throw. */
  onDecision?: (d: IncidentDecision, tenant: string) => void;
}

/**
 * The engine behind HTTP, the CLI and library use: validate, derive identity
 * and fingerprint, one atomic store step, a decision with a reason.
 */
export class Deduplicator {
  readonly store: DedupStore;
  private readonly config: () => Config;
  private readonly onDecision: (d: IncidentDecision, tenant: string) => void;

  constructor(options: DeduplicatorOptions) {
    this.store = options.store;
    this.config = options.config ?? (() => defaultConfig);
    this.onDecision = options.onDecision ?? (() => {});
  }

  /** Validates `input` (throws ValidationError) and decides CREATE / SUPPRESS / UPDATE. */
  async decideIncident(input: IncidentInput | unknown, tenant = DEFAULT_TENANT): Promise<IncidentDecision> {
    const incident = parseIncident(input);
    const cfg = this.config().incidents;
    const key = incidentKey(incident);
    const { outcome } = await this.store.decideIncident({
      tenant,
      key,
      fingerprint: incidentFingerprint(incident),
      ttlMs: incidentTtlSeconds(cfg, incident) * 1000,
    });
    const { decision, reason } = decideFromOutcome(outcome, cfg.race_window_ms);
    const result: IncidentDecision = { decision, reason, dedup_key: key, provisional: false };
    this.onDecision(result, tenant);
    return result;
  }

  async getIncident(key: string, tenant = DEFAULT_TENANT): Promise<IncidentView | null> {
    assertKey(key);
    const rec = await this.store.getIncident(tenant, key);
    return rec ? incidentView(rec) : null;
  }

  /** Closes a live incident; the next arrival of its key is a CREATE. False when not live. */
  async closeIncident(key: string, tenant = DEFAULT_TENANT): Promise<boolean> {
    assertKey(key);
    return this.store.closeIncident(tenant, key);
  }

  close(): Promise<void> {
    return this.store.close();
  }
}

function assertKey(key: string): void {
  if (!INCIDENT_KEY_PATTERN.test(key)) {
    throw new ValidationError('invalid dedup_key: must be "dedup:" followed by 32 lowercase hex characters', [
      { path: 'dedup_key', message: 'must be "dedup:" followed by 32 lowercase hex characters' },
    ]);
  }
}

export interface OpenOptions {
  /** `memory:` or `sqlite:PATH` (default `sqlite:./data/onceonly.db`). */
  store?: string;
  clock?: Clock;
  /** The same shape as the config file; validated (throws ValidationError). */
  config?: ConfigInput;
}

/** Library entry point: a deduplicator on a store URL. */
export function openDeduplicator(options: OpenOptions = {}): Deduplicator {
  const config = options.config === undefined ? defaultConfig : parseWith(configSchema, options.config, 'config');
  const store = openStore(options.store ?? DEFAULT_STORE_URL, options.clock ?? systemClock);
  return new Deduplicator({ store, config: () => config });
}
