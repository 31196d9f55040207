import { isUtf8 } from 'node:buffer';
import { ForbiddenError } from '../access/tenants.js';
import type { IngestKind } from '../config/ingest.js';
import { ValidationError } from '../core/validation.js';
import type { AlertmanagerIngest } from '../engine/alertmanager.js';
import type { Deduplicator } from '../engine/deduplicator.js';
import type { EventIngest } from '../engine/events.js';
import type { ViolationIngest } from '../engine/violations.js';
import { parseAlertmanager } from '../inputs/alertmanager/schema.js';
import { MAX_DEPTH } from '../inputs/limits.js';
import type { EventAccounting } from '../observe/event-accounting.js';
import type { Logger } from '../observe/logger.js';
import type { Registry } from 'prom-client';
import type { Origin } from '../store/contract/index.js';
import { StoreRefusedError } from '../store/errors.js';

/** The engine's ingests, as the HTTP routes use them: one input of a kind in, one decision made durable. */
export interface Ingests {
  dedup: Pick<Deduplicator, 'decideIncident'>;
  events: Pick<EventIngest, 'apply'>;
  violations: Pick<ViolationIngest, 'apply'>;
  alerts: Pick<AlertmanagerIngest, 'apply'>;
  accounting: Pick<EventAccounting, 'decided' | 'refused'>;
}

/** What every broker ingest is given: where it logs and counts, whose messages they are, and the body bound. */
export interface IngestOptions {
  logger: Logger;
  registry: Registry;
  /** the tenant the messages belong to, and whether tenants are configured (a device event must then name it) */
  tenant: string;
  scoped: boolean;
  /** the largest message decided (limits.body_bytes) */
  maxBytes: number;
  /** the most alerts one Alertmanager payload may carry (limits.alerts_per_post) */
  alertsPerPost: number;
  /** told of errors that repeat while the broker, or the store, is down (rate-limited by the caller) */
  connectionError: (err: Error) => void;
  storeError: (err: Error) => void;
}

/** The kind of the first filter (in config order) that `matches` the message's topic or subject. */
export function kindOf(
  filters: Readonly<Record<string, IngestKind>>,
  name: string,
  matches: (filter: string, name: string) => boolean,
): IngestKind | undefined {
  for (const [filter, kind] of Object.entries(filters)) if (matches(filter, name)) return kind;
  return undefined;
}

/** What became of one message: decided (durable), or refused for good with a reason a person can act on. */
export type Taken = { ok: true } | { ok: false; reason: 'invalid' | 'forbidden'; message: string };

/**
 * Decides one message's body as its route would, and accounts a device event
 * as the HTTP route does (received = applied + duplicate + rejected). A body
 * that is not valid input, or another tenant's, is refused (`ok: false`):
 * sending it again cannot help. Anything else (the store unreachable or
 * full) throws, and the message is taken again later.
 */
export async function decideOne(
  ingests: Ingests,
  kind: IngestKind,
  payload: Buffer,
  tenant: string,
  scoped: boolean,
  origin: Origin,
  limits?: { alertsPerPost: number },
): Promise<Taken> {
  let body: unknown;
  try {
    body = parseJson(payload);
  } catch (err) {
    return refused(ingests, kind, tenant, 'invalid', (err as Error).message);
  }
  try {
    switch (kind) {
      case 'incident':
        await ingests.dedup.decideIncident(body, tenant, origin);
        break;
      case 'event':
        ingests.accounting.decided(await ingests.events.apply(body, scoped ? tenant : undefined, origin), tenant);
        break;
      case 'violation':
        await ingests.violations.apply(body, tenant, origin);
        break;
      case 'alertmanager': {
        const payload = parseAlertmanager(body);
        // The HTTP route's bound (413 there): a message of more alerts is refused whole, never decided in part.
        if (limits && payload.alerts.length > limits.alertsPerPost)
          return refused(ingests, kind, tenant, 'invalid', `${payload.alerts.length} alerts, over limits.alerts_per_post (${limits.alertsPerPost})`);
        await ingests.alerts.apply(payload, tenant, origin);
        break;
      }
    }
    return { ok: true };
  } catch (err) {
    if (err instanceof ValidationError) return refused(ingests, kind, tenant, 'invalid', err.message);
    if (err instanceof ForbiddenError) return refused(ingests, kind, tenant, 'forbidden', err.message);
    // The store answered and refused this input (not for being full): it would refuse it again.
    if (err instanceof StoreRefusedError && !err.full) return refused(ingests, kind, tenant, 'invalid', err.message);
    throw err;
  }
}

/**
 * A body as the HTTP routes' parser takes it: UTF-8, JSON, and no
 * `__proto__` or `constructor.prototype` key (refused there too, so no input
 * can reach an object's prototype however it is copied later).
 */
function parseJson(payload: Buffer): unknown {
  if (!isUtf8(payload)) throw new Error('not valid UTF-8');
  let value: unknown;
  try {
    // No reviver: V8 parses any depth without recursion, a reviver walks it back by recursion (a
    // message nested 100,000 deep overflowed the stack). The keys are checked below, iteratively.
    value = JSON.parse(payload.toString('utf8'));
  } catch (err) {
    throw err instanceof SyntaxError ? new Error(`not JSON: ${err.message}`) : err;
  }
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    if (depth > MAX_MESSAGE_DEPTH) throw new Error(`nested more than ${MAX_MESSAGE_DEPTH} levels deep (carried objects are at most ${MAX_DEPTH})`);
    for (const [key, child] of Object.entries(v)) {
      if (key === '__proto__' || (key === 'constructor' && typeof child === 'object' && child !== null && 'prototype' in child))
        throw new Error(`a "${key}" key is not taken`);
      stack.push([child, depth + 1]);
    }
  }
  return value;
}

/** How deep a message may nest: a carried object's bound, and the few levels of the body around it. */
const MAX_MESSAGE_DEPTH = MAX_DEPTH + 8;

function refused(ingests: Ingests, kind: IngestKind, tenant: string, reason: 'invalid' | 'forbidden', message: string): Taken {
  if (kind === 'event') ingests.accounting.refused(reason, tenant);
  return { ok: false, reason, message: message.slice(0, 500) };
}
