import { type Config, incidentLifetimeMs } from '../config/schema.js';
import type { Severity } from '../core/fingerprint.js';
import { type OgAlert, type OgPriority, opsgenieLabels } from '../inputs/opsgenie/schema.js';
import { applyEdit, type OgEdit, type OgShown, sameShown } from '../inputs/opsgenie/edits.js';
import type { OgList } from '../inputs/opsgenie/list-query.js';
import { severityOfFingerprint } from '../core/outbox.js';
import { StoreUnavailableError } from '../store/errors.js';
import type { IncidentRecord, Origin } from '../store/contract/index.js';
import { type OgAlertRef, type OgNamed, ogAlertId, ogTinyId } from '../inputs/opsgenie/alert-id.js';
import type { OgParse } from '../inputs/opsgenie/parse.js';
import { respondersOf } from '../inputs/opsgenie/responders.js';
import type { Deduplicator } from './deduplicator.js';

/** Opsgenie's five priorities onto onceonly's four severities. */
const SEVERITY: Record<OgPriority, Severity> = { P1: 'CRITICAL', P2: 'MAJOR', P3: 'MINOR', P4: 'INFO', P5: 'INFO' };

/**
 * Reads and tries of one edit while other arrivals or edits of the alert
 * keep moving it: each try is one atomic step that changes nothing when the
 * alert moved since its read.
 */
const EDIT_TRIES = 5;

/** An Opsgenie alias lives in a namespace of its own, apart from `dedup:`, `am:` and `pd:` keys. */
const OG_PREFIX = 'og:';
export const opsgenieKey = (alias: string) => `${OG_PREFIX}${alias}`;

/** Live incidents a list reads at most, of which it answers the `og:` ones: a tenant's list costs a bounded read. */
export const OG_LISTED = 1000;

/** What an edit's `data.edited` names: the field it changed (`tags` and `details` for their additions and removals). */
const EDITED: Record<string, string> = { addTags: 'tags', removeTags: 'tags', addDetails: 'details', removeDetails: 'details', addResponder: 'responders' };
const editedField = (edit: OgEdit): string => {
  const [name] = Object.keys(edit) as [string];
  return EDITED[name] ?? name;
};

export type OgOutcome = 'CREATE' | 'SUPPRESS' | 'UPDATE' | 'acknowledged' | 'closed' | 'ignored';

/**
 * Opsgenie's Alert API on the incident store, as Opsgenie deduplicates: an
 * alert is known by its alias while it is open; a create of an open alias is
 * a repeat (a new priority is a material change: UPDATE); acknowledge is an
 * update, once per episode; close ends it, so the next create opens a new
 * incident.
 */
export class OpsgenieIngest {
  constructor(
    private readonly dedup: Deduplicator,
    private readonly config: () => Config,
  ) {}

  async create(a: OgAlert, tenant: string, origin?: Origin): Promise<{ outcome: OgOutcome; provisional: boolean }> {
    const key = opsgenieKey(a.alias);
    const severity = SEVERITY[a.priority];
    const labels = opsgenieLabels(a);
    const d = await this.dedup.decide(
      {
        tenant,
        key,
        fingerprint: `${severity}|0`,
        ttlMs: incidentLifetimeMs(this.config().incidents),
        shown: { summary: a.message, labels, ...(a.description !== undefined ? { description: a.description } : {}) },
        // A repeat of an open alert counts, as at Opsgenie, and leaves its message and description as its
        // receivers last heard them: an edit (update_alerts) compares with those.
        showsOnChange: true,
        outbox: this.dedup.withRoute(tenant, key, {
          severity,
          summary: a.message,
          data: {
            alias: a.alias,
            priority: a.priority,
            // A severity the sender gave (Alertmanager's opsgenie_configs sends its labels as details) is the
            // severity as sent, which routes match; without one, the label is onceonly's, from the priority.
            ...(labels.severity !== undefined ? { severity: labels.severity } : {}),
            labels,
            ...(a.description !== undefined ? { description: a.description } : {}),
            ...(a.tags.length > 0 ? { tags: a.tags } : {}),
            ...(Object.keys(a.details).length > 0 ? { details: a.details } : {}),
          },
        }),
      },
      origin,
    );
    return { outcome: d.decision, provisional: d.provisional };
  }

  /**
   * Edits an open alert as Opsgenie's edits do (its message, description,
   * priority, tags or details): an UPDATE of the episode the call names (by
   * alias, any open one), delivered to the alert's adapters; its severity
   * follows a new priority. Read, then decided with the store's step on that
   * episode as read (IncidentClaim.amends): an edit never opens an episode,
   * and never undoes an arrival or another edit that came between its read
   * and its step (it reads again). `ignored` when nothing the call names is
   * open; `SUPPRESS` when the edit changes nothing (Alertmanager's
   * `update_alerts` sends the same message and description with every
   * repeat), which writes nothing and sends no update; `refused` with
   * Opsgenie's errors by field when the alert cannot take it (too many tags).
   */
  async edit(ref: OgAlertRef, edit: OgEdit, tenant: string, origin?: Origin): Promise<OgOutcome | { refused: Record<string, string> }> {
    const key = opsgenieKey(ref.alias);
    for (let tries = 0; tries < EDIT_TRIES; tries++) {
      const rec = await this.get(ref, tenant);
      if (!rec) return 'ignored';
      const was: OgShown = {
        summary: rec.latest?.summary ?? '',
        labels: { ...(rec.latest?.labels ?? {}) },
        ...(rec.latest?.description !== undefined ? { description: rec.latest.description } : {}),
      };
      const next = applyEdit(was, edit);
      if (!next.ok) return { refused: next.errors };
      if (sameShown(was, next.value)) return 'SUPPRESS';
      const { summary, labels, description } = next.value;
      const priority = (labels.priority ?? 'P3') as OgPriority;
      const severity = 'priority' in edit ? SEVERITY[priority] : severityOfFingerprint(rec.fingerprint);
      const d = await this.dedup.decide(
        {
          tenant,
          key,
          fingerprint: 'priority' in edit ? `${severity}|0` : rec.fingerprint,
          ttlMs: incidentLifetimeMs(this.config().incidents),
          amends: { episode: rec.createdAt, refires: rec.refires },
          shown: next.value,
          outbox: this.dedup.withRoute(tenant, key, {
            severity,
            summary,
            data: {
              alias: ref.alias,
              priority,
              ...(labels.severity !== undefined ? { severity: labels.severity } : {}),
              labels,
              ...(description !== undefined ? { description } : {}),
              edited: editedField(edit),
            },
          }),
        },
        origin,
      );
      if (d.reason !== 'stale') return d.decision;
    }
    throw new StoreUnavailableError(`the alert kept changing while this edit was made (${EDIT_TRIES} tries): retry`);
  }

  /**
   * The tenant's open alerts as Opsgenie's list answers them: of the first
   * `OG_LISTED` live incidents the store finds, the `og:` ones, sorted by
   * `sort` (createdAt, updatedAt, count) in `order`, then `offset` and
   * `limit`. Without details and description, as Opsgenie's list leaves them
   * out.
   */
  async list(tenant: string, q: OgList): Promise<Array<Omit<ReturnType<typeof alertView>, 'details' | 'description'>>> {
    const open = (await this.dedup.store.queries.listIncidents(tenant, OG_LISTED)).filter((r) => r.key.startsWith(OG_PREFIX));
    const value = (r: IncidentRecord) => (q.sort === 'count' ? r.refires : q.sort === 'updatedAt' ? r.lastSeenAt : r.createdAt);
    open.sort((a, b) => (value(a) - value(b)) * (q.order === 'asc' ? 1 : -1) || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    return open.slice(q.offset, q.offset + q.limit).map((r) => {
      const { details: _d, description: _x, ...view } = alertView(r.key.slice(OG_PREFIX.length), r);
      return view;
    });
  }

  /**
   * The alert a call names, a tiny id looked up among the tenant's open
   * alerts (the first OG_LISTED the store finds, as a list reads them): null
   * when none open has it. Refused, naming what to send instead, when two
   * open alerts share it, or when the tenant has more open alerts than the
   * look covers and none of those has it (it may be past them): a close or
   * acknowledge by tiny id never lands on the wrong alert, nor silently on none.
   */
  async resolve(named: OgNamed, tenant: string): Promise<OgParse<OgAlertRef | null>> {
    if (!('tiny' in named)) return { ok: true, value: named };
    const all = await this.dedup.store.queries.listIncidents(tenant, OG_LISTED);
    const found = all.filter((r) => r.key.startsWith(OG_PREFIX) && ogTinyId(r.key.slice(OG_PREFIX.length), r.createdAt) === named.tiny);
    if (found.length > 1)
      return { ok: false, errors: { identifier: `${found.length} open alerts share the tiny id ${named.tiny}: name the alert by its id or alias.` } };
    if (found.length === 1) return { ok: true, value: { alias: found[0]!.key.slice(OG_PREFIX.length), createdAt: found[0]!.createdAt } };
    // listIncidents reads every live incident kind; at OG_LISTED of them the tenant may hold more.
    if (all.length >= OG_LISTED)
      return {
        ok: false,
        errors: { identifier: `No alert with tiny id ${named.tiny} among the first ${OG_LISTED} open ones: name the alert by its id or alias.` },
      };
    return { ok: true, value: null };
  }

  /** The live alert a read names, or null: none open, or (by id) an episode other than the id's. */
  async get(ref: OgAlertRef, tenant: string): Promise<IncidentRecord | null> {
    const rec = await this.dedup.store.incidents.get(tenant, opsgenieKey(ref.alias));
    return rec && (ref.createdAt === undefined || rec.createdAt === ref.createdAt) ? rec : null;
  }

  /** Closes the alert a call names: any open episode of an alias, or (by id) that episode only, in the store's one step. */
  async close(ref: OgAlertRef, tenant: string, origin?: Origin): Promise<OgOutcome> {
    return (await this.dedup.closeKey(tenant, opsgenieKey(ref.alias), undefined, origin, ref.createdAt)) ? 'closed' : 'ignored';
  }

  async acknowledge(ref: OgAlertRef, tenant: string, origin?: Origin): Promise<OgOutcome> {
    return (await this.dedup.acknowledgeKey(tenant, opsgenieKey(ref.alias), 'opsgenie', origin, undefined, ref.createdAt)) === 'acknowledged'
      ? 'acknowledged'
      : 'ignored';
  }
}

/** The labels an alert's own fields make (opsgenieLabels): the rest are its details. */
const OWN = new Set(['priority', 'tags', 'entity', 'source', 'responders', 'visibleTo']);

/**
 * A live `og:` incident as Opsgenie's `GET /v2/alerts/{identifier}` answers
 * an alert. What onceonly does not keep is left out rather than made up:
 * `owner`, `teams`; `tinyId` is derived from the id (ogTinyId); `responders` are as sent; `details` are the
 * alert's details by their label names; `isSeen` is whether it was acknowledged.
 */
export function alertView(alias: string, rec: IncidentRecord) {
  const labels = rec.latest?.labels ?? {};
  const iso = (ms: number) => new Date(ms).toISOString();
  const acknowledged = rec.acknowledged === true;
  return {
    id: ogAlertId(alias, rec.createdAt),
    tinyId: ogTinyId(alias, rec.createdAt),
    alias,
    message: rec.latest?.summary ?? '',
    status: 'open' as const,
    acknowledged,
    isSeen: acknowledged,
    tags: labels.tags ? labels.tags.split(',') : [],
    snoozed: false,
    count: rec.refires + 1,
    lastOccurredAt: iso(rec.lastSeenAt),
    createdAt: iso(rec.createdAt),
    updatedAt: iso(rec.lastSeenAt),
    priority: labels.priority ?? 'P3',
    ...(labels.source !== undefined ? { source: labels.source } : {}),
    ...(labels.entity !== undefined ? { entity: labels.entity } : {}),
    ...(rec.latest?.description !== undefined ? { description: rec.latest.description } : {}),
    responders: respondersOf(labels.responders),
    details: Object.fromEntries(Object.entries(labels).filter(([n]) => !OWN.has(n))),
  };
}
