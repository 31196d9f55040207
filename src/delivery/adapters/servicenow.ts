import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { Adapter } from '../adapter.js';
import type { OutboxEntry } from '../../core/outbox.js';
import { basicAuth } from '../http.js';
import { defineAdapter, describe, fieldRenderer, httpUrl, kindsOf, restCaller, type AdapterDeps } from './common.js';
import { adapterBase, fieldTemplates, registerAdapterConfig } from '../../config/adapters.js';

export const servicenowConfig = registerAdapterConfig(
  adapterBase.extend({
    type: z.literal('servicenow'),
    /** e.g. https://example.service-now.com */
    instance_url: httpUrl,
    table: z
      .string()
      .regex(/^[a-z0-9_]+$/)
      .default('incident'),
    username: z.string().min(1),
    password: z.string().min(1),
    /** the `state` a close sets (6 = Resolved in the stock incident table) */
    resolved_state: z.string().default('6'),
    /** the `state` a create sets on a found record that was resolved or closed (2 = In Progress) */
    reopen_state: z.string().default('2'),
    close_code: z.string().default('Solved (Permanently)'),
    /**
     * the `state` of a record that can no longer change (7 = Closed in the stock incident table, whose
     * write ACL refuses any update): a new fault of its key makes a new record instead of reopening it
     */
    closed_state: z.string().default('7'),
    /** the `state` a duplicate made by a concurrent create is set to (8 = Canceled in the stock incident table) */
    duplicate_state: z.string().default('8'),
    /**
     * Columns as templates (assignment_group, cmdb_ci, category, any u_…), set on every create and
     * update; not the columns the adapter keeps a record's identity and life cycle in (docs/routing.md).
     */
    fields: fieldTemplates(
      /^(?!(?:correlation_id|correlation_display|sys_id|number|state|close_code|close_notes|work_notes)$)[a-z][a-z0-9_]{0,79}$/,
      'a column name (lower-case letters, digits and _), and not one the adapter sets itself: correlation_id, correlation_display, sys_id, number, state, close_code, close_notes, work_notes',
    ),
  }),
);
export type ServicenowConfig = z.output<typeof servicenowConfig>;

declare module '../../config/adapters.js' {
  interface AdapterConfigs {
    servicenow: ServicenowConfig;
  }
}

/**
 * The record's correlation_id: a hash of tenant, kind and key, hex only, so
 * nothing a producer sends can reach the encoded query as an operator (a key
 * holding `^OR…` or `^NQ…` would otherwise match other tenants' records).
 */
/** A ServiceNow record as a key's history shows it: its number and sys_id. */
const snowTicket = (r: { sys_id: string; number?: string }): Record<string, string> => ({ ...(r.number ? { number: r.number } : {}), sys_id: r.sys_id });

export function servicenowCorrelation(e: Pick<OutboxEntry, 'tenant' | 'kind' | 'key'>): string {
  return `onceonly-${createHash('sha256').update(`${e.tenant}\u0000${e.kind}\u0000${e.key}`).digest('hex').slice(0, 40)}`;
}

/** How every key begins: its kind's prefix (incidents, PagerDuty, Alertmanager, groups), or a violation's 40 hex digits. */
const KEY_PREFIXES = new Set(['dedup', 'pd', 'am', 'group']);
const looksLikeKey = (s: string) => KEY_PREFIXES.has(s.slice(0, s.indexOf(':'))) || /^[0-9a-f]{40}$/.test(s);

/**
 * What earlier versions wrote as correlation_id (the key, prefixed by a
 * non-default tenant), when it is made only of characters that cannot be an
 * operator: such a record is still found, and moved to the hashed id when it
 * is next touched. A legacy id with other characters is not looked up.
 *
 * Nor is one that two tenants could have written. `default`'s keys went
 * unprefixed, so its `am:pd:db-down` (an alert whose fingerprint is
 * `pd:db-down`) reads the same as the PagerDuty key `pd:db-down` of a tenant
 * named `am`. Such a record could be another tenant's: it is left alone, and
 * this key gets a record of its own.
 */
function legacyCorrelation(e: OutboxEntry): string | null {
  if (e.tenant === 'default' ? looksLikeKey(e.key.slice(e.key.indexOf(':') + 1)) : KEY_PREFIXES.has(e.tenant)) return null;
  const id = e.tenant === 'default' ? e.key : `${e.tenant}:${e.key}`;
  return /^[A-Za-z0-9:._-]{1,100}$/.test(id) ? id : null;
}

/** ServiceNow impact and urgency: 1 high … 3 low. */
const LEVEL: Record<string, string> = { CRITICAL: '1', MAJOR: '2', MINOR: '3', INFO: '3' };

/**
 * ServiceNow Table API. Upsert by key: the record is found by
 * `correlation_id` = the entry's key (the oldest, if there are several), then
 * created (POST) or updated (PATCH), so a retry after a create whose answer
 * was lost updates the record it made; a create that raced another one is
 * merged into the older record.
 */
export function servicenowAdapter(c: ServicenowConfig, deps: AdapterDeps): Adapter {
  const kinds = kindsOf(c.kinds, ['incident', 'violation']);
  const base = `${c.instance_url.replace(/\/+$/, '')}/api/now/table/${c.table}`;
  const call = restCaller({ accept: 'application/json', 'content-type': 'application/json', authorization: basicAuth(c.username, c.password) }, c, deps);
  type Found = { sys_id: string; number?: string; state?: string; correlation_id?: string; legacy?: true };
  const render = fieldRenderer(c.fields, deps);

  /**
   * The key's records, oldest first (ServiceNow numbers rise): more than one
   * only when creates raced. One query also finds a record an earlier
   * version made under the old id; both ids hold no operator characters.
   */
  async function records(e: OutboxEntry): Promise<Found[]> {
    const id = servicenowCorrelation(e);
    const legacy = legacyCorrelation(e);
    const q = new URLSearchParams({
      sysparm_query: `correlation_id=${id}${legacy ? `^ORcorrelation_id=${legacy}` : ''}^ORDERBYnumber`,
      sysparm_fields: 'sys_id,number,state,correlation_id',
      sysparm_limit: '10',
    });
    const res = await call(`${base}?${q}`, 'GET');
    const rows = (res.body as { result?: Found[] } | null)?.result;
    if (!Array.isArray(rows)) throw new Error(`ServiceNow answered a query without a result list: ${res.text.slice(0, 200)}`);
    // ServiceNow's `=` ignores case, and tenant ids may differ only by case: a row is the key's only when its
    // id is exactly one of the two asked for (tenant `Acme` must not take over `acme`'s legacy record).
    return rows.flatMap((r) => (r.correlation_id === id ? [r] : legacy !== null && r.correlation_id === legacy ? [{ ...r, legacy: true as const }] : []));
  }

  /**
   * The key's records that are still open, oldest first. Closed and
   * cancelled ones are history: a Closed incident cannot be written (its ACL
   * refuses any update), so the key's ticket is its oldest open record, and a
   * new fault after a Closed one makes a new record.
   */
  async function openRecords(e: OutboxEntry): Promise<Found[]> {
    return (await records(e)).filter((r) => r.state !== c.closed_state && r.state !== c.duplicate_state);
  }

  /**
   * Younger records of the key that are not cancelled yet are duplicates of
   * the oldest: cancel them, pointing at it. A create that raced another is
   * merged right after its POST, but if that second look failed (a timeout
   * on a loaded instance) its record would stand; the retry, and any later
   * change of the key, finds it here. Cancelling twice is harmless.
   */
  /** A record a raced create made, cancelled in favour of the key's oldest. */
  function cancelAsDuplicate(r: Pick<Found, 'sys_id'>, oldest: Found) {
    return call(`${base}/${r.sys_id}`, 'PATCH', {
      state: c.duplicate_state,
      close_code: 'Duplicate',
      close_notes: `Duplicate of ${oldest.number ?? oldest.sys_id} (onceonly: concurrent create)`,
    });
  }

  /** `rows`: the key's open records, oldest first. */
  async function cancelDuplicates(rows: Found[]): Promise<number> {
    const [oldest, ...younger] = rows;
    let n = 0;
    for (const r of younger) {
      if (!oldest) continue;
      await cancelAsDuplicate(r, oldest);
      n++;
    }
    return n;
  }

  return defineAdapter(
    c,
    (e) => kinds.has(e.kind),
    async (job) => {
      const e = job.entry;
      const rows = await openRecords(e);
      const found = rows[0] ?? null;
      const level = LEVEL[e.severity] ?? '3';
      if (e.action === 'close') {
        if (!found) return 'nothing to close';
        await call(`${base}/${found.sys_id}`, 'PATCH', {
          state: c.resolved_state,
          close_code: c.close_code,
          close_notes: `Closed by onceonly (${e.key})`,
          ...(found.legacy ? { correlation_id: servicenowCorrelation(e) } : {}),
        });
        await cancelDuplicates(rows);
        return { detail: `resolved ${found.number ?? found.sys_id}`, ticket: snowTicket(found) };
      }
      const fields = { short_description: e.summary || `${e.kind} ${e.key}`, impact: level, urgency: level, ...render(e) };
      if (found) {
        // A create for a key whose record was resolved (closed by onceonly, then the fault came back) reopens it.
        const reopen = e.action === 'create' && found.state === c.resolved_state;
        await call(`${base}/${found.sys_id}`, 'PATCH', {
          ...fields,
          ...(reopen ? { state: c.reopen_state } : {}),
          ...(found.legacy ? { correlation_id: servicenowCorrelation(e) } : {}),
          work_notes: `onceonly ${e.action}:\n${describe(e)}`,
        });
        const merged = await cancelDuplicates(rows);
        return {
          detail: `${reopen ? 'reopened' : 'updated'} ${found.number ?? found.sys_id}${merged ? ` (cancelled ${merged} duplicate${merged > 1 ? 's' : ''})` : ''}`,
          ticket: snowTicket(found),
        };
      }
      // A templated description replaces the adapter's own, as any templated column does.
      const res = await call(base, 'POST', { description: describe(e), ...fields, correlation_id: servicenowCorrelation(e), correlation_display: 'onceonly' });
      const made = (res.body as { result?: Found } | null)?.result;
      // ServiceNow cannot refuse a second record with the same correlation_id, and
      // two creates can race past the lookup (replicas failing open during a
      // store outage each deliver their own provisional CREATE; a paused worker
      // wakes up mid-call). So look again: if an older record holds the key,
      // this one is the duplicate: cancel it, pointing at the older one, and
      // apply the change there. Both racers converge on the oldest record.
      const oldest = (await openRecords(e))[0];
      if (made?.sys_id && oldest && oldest.sys_id !== made.sys_id) {
        await cancelAsDuplicate(made, oldest);
        await call(`${base}/${oldest.sys_id}`, 'PATCH', {
          ...fields,
          work_notes: `onceonly ${e.action} (merged a duplicate ${made.number ?? made.sys_id}):\n${describe(e)}`,
        });
        return { detail: `merged ${made.number ?? made.sys_id} into ${oldest.number ?? oldest.sys_id}`, ticket: snowTicket(oldest) };
      }
      return made?.sys_id ? { detail: `created ${made.number ?? made.sys_id}`, ticket: snowTicket(made) } : 'created';
    },
  );
}
