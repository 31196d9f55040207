import { z } from 'zod';
import type { OutboxEntry, OutboxKind } from '../../core/outbox.js';
import type { Clock } from '../../core/clock.js';
import type { TicketStore } from '../../store/contract/index.js';
import type { Adapter, DeliveryJob } from '../adapter.js';
import { attempt, http, json } from '../http.js';

export const httpUrl = z.url({ protocol: /^https?$/, message: 'must be an http:// or https:// URL' });

export interface AdapterDeps {
  clock: Clock;
  /** Which ticket a receiver opened for a key, for adapters that cannot rely on their receiver's search. */
  tickets: TicketStore;
}

/** The webhook's documented payload (docs/adapters.md); other adapters build theirs from the same fields. */
export function wireBody(e: OutboxEntry) {
  return { action: e.action, kind: e.kind, key: e.key, tenant: e.tenant, severity: e.severity, summary: e.summary, data: e.data };
}

export const kindsOf = (given: readonly OutboxKind[] | undefined, defaults: readonly OutboxKind[]) => new Set(given ?? defaults);

/**
 * `s` cut to at most `max` UTF-16 units (as JavaScript and Java, and so
 * Jira, count characters), never between the halves of a surrogate pair;
 * `marker` ends a text that was cut and counts toward `max`.
 */
export function cutText(s: string, max: number, marker = ''): string {
  if (s.length <= max) return s;
  let end = max - marker.length;
  const last = s.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return s.slice(0, end) + marker;
}

/** One line: every run of whitespace that holds a line break becomes one space. */
export const oneLine = (s: string) => s.replace(/\s*[\r\n]+\s*/g, ' ').trim();

/** A human line for ticket descriptions and chat. */
export function describe(e: OutboxEntry): string {
  return [
    e.summary || `${e.kind} ${e.key}`,
    '',
    `key: ${e.key}`,
    `tenant: ${e.tenant}`,
    `severity: ${e.severity}`,
    `decided at: ${new Date(e.at).toISOString()}`,
    `data: ${JSON.stringify(e.data)}`,
  ].join('\n');
}

/**
 * An adapter made of one `run` per delivery: what run throws (an HttpFailure
 * or any error) becomes a failed result; what it returns is the success detail.
 */
export function defineAdapter(
  c: { name: string; type: string; timeout_ms?: number },
  accepts: (e: OutboxEntry) => boolean,
  run: (job: DeliveryJob) => Promise<string | void>,
): Adapter {
  return { name: c.name, type: c.type, ...(c.timeout_ms !== undefined ? { timeoutMs: c.timeout_ms } : {}), accepts, deliver: (job) => attempt(() => run(job)) };
}

/** A JSON REST caller with fixed headers, the adapter's timeout and clock. */
export function restCaller(headers: Record<string, string>, c: { timeout_ms: number }, deps: AdapterDeps) {
  return (url: string, method: string, body?: unknown) =>
    http(url, { method, headers, timeoutMs: c.timeout_ms, now: deps.clock.now, ...(body !== undefined ? { body: json(body) } : {}) });
}
