/**
 * Library use: the same engine the gateway runs, embedded in your own process.
 *
 *   const dedup = openDeduplicator({ store: 'sqlite:./dedup.db' });
 *   const { decision } = await dedup.decideIncident({ element_id, fault_class, root_cause_id, severity: 'MAJOR' });
 */
// Registers every adapter's config schema, so a config naming adapters parses here too.
import './delivery/adapters/index.js';

export { openDeduplicator, Deduplicator, DEFAULT_TENANT } from './engine/deduplicator.js';
export type { IncidentDecision, DeduplicatorOptions, OpenOptions } from './engine/deduplicator.js';
export type { IncidentView } from './engine/views.js';
export { openStore, StoreUrlError } from './store/open.js';
export type { DedupStore, IncidentRecord, IncidentClaim } from './store/contract/index.js';
export { MemoryStore } from './store/memory/memory-store.js';
export { SqliteStore } from './store/sqlite/sqlite-store.js';
export { systemClock, manualClock, type Clock, type ManualClock } from './core/clock.js';
export { incidentKey, escapeField, joinIdentity } from './core/identity.js';
export { incidentFingerprint, SEVERITIES, type Severity } from './core/fingerprint.js';
export type { Decision, DecisionReason } from './core/decision.js';
export { ValidationError, type Issue } from './core/validation.js';
export { configSchema, defaultConfig, type Config } from './config/schema.js';
export { parseConfig, loadConfigFile, ConfigError } from './config/load.js';
export { startServer, type ServerOptions, type RunningServer } from './app/start.js';
