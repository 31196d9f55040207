import { z } from 'zod';
import type { OutboxEntry, OutboxKind } from '../../core/outbox.js';
import type { Clock } from '../../core/clock.js';
import type { TicketStore } from '../../store/contract/index.js';
import type { Adapter, DeliveryJob } from '../adapter.js';
import { parseTemplate, renderTemplate, TemplateError } from '../../core/template.js';
import { labelsOf } from '../../inputs/labels.js';
import { attempt, http, HttpFailure, json, type Done } from '../http.js';

export const httpUrl = z.url({ protocol: /^https?$/, message: 'must be an http:// or https:// URL' });

export interface AdapterDeps {
  clock: Clock;
  /** config `lookups:`, as in force now (a reload changes them without rebuilding the adapters) */
  lookups?: () => Readonly<Record<string, Readonly<Record<string, string>>>>;
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

/**
 * An adapter's `fields:` ready to render: each template parsed once, and
 * rendered for an entry over what a template sees:
 * `labels` (every label a route or silence matches, identity fields and
 * `tenant` included), `severity`, `summary`, `key`, `tenant`, `kind` and
 * config `lookups`. A template that fails at delivery is a dead letter
 * saying which field and why (one that ran past its time is retried first);
 * it is never sent half-rendered.
 */
export function fieldRenderer(fields: Readonly<Record<string, string>>, deps: Pick<AdapterDeps, 'lookups'>, escapeValue?: (s: string) => string) {
  const parsed = Object.entries(fields).map(([name, source]) => [name, parseTemplate(source, escapeValue)] as const);
  return (e: OutboxEntry): Record<string, string> => {
    if (parsed.length === 0) return {};
    const values = {
      // The entry names its tenant: labelsOf sets it after everything the producer sent.
      labels: labelsOf(e),
      severity: e.severity,
      summary: e.summary,
      key: e.key,
      tenant: e.tenant,
      kind: e.kind,
      lookups: deps.lookups?.() ?? {},
    };
    const out: Record<string, string> = {};
    for (const [name, t] of parsed) {
      try {
        out[name] = renderTemplate(t, values);
      } catch (err) {
        if (!(err instanceof TemplateError)) throw err;
        // Over its time it may only have been paused: retried on the backoff, and parked when the retries run out.
        throw new HttpFailure({ ok: false, retryable: err.overTime, reason: 'render', error: `field ${name} did not render: ${err.message}` });
      }
    }
    return out;
  };
}

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
  run: (job: DeliveryJob) => Promise<Done>,
): Adapter {
  return { name: c.name, type: c.type, ...(c.timeout_ms !== undefined ? { timeoutMs: c.timeout_ms } : {}), accepts, deliver: (job) => attempt(() => run(job)) };
}

/** A JSON REST caller with fixed headers, the adapter's timeout and clock. */
export function restCaller(headers: Record<string, string>, c: { timeout_ms: number }, deps: AdapterDeps) {
  return (url: string, method: string, body?: unknown) =>
    http(url, { method, headers, timeoutMs: c.timeout_ms, now: () => deps.clock.now(), ...(body !== undefined ? { body: json(body) } : {}) });
}
