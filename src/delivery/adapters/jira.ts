import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { Adapter } from '../adapter.js';
import type { OutboxEntry } from '../../core/outbox.js';
import { basicAuth, HttpFailure, type Done } from '../http.js';
import { cutText, defineAdapter, describe, fieldRenderer, httpUrl, kindsOf, oneLine, restCaller, type AdapterDeps } from './common.js';
import { adapterBase, fieldTemplates, registerAdapterConfig } from '../../config/adapters.js';
import { TICKET_MEMORY_MS, type TicketOwner } from '../../store/contract/index.js';
import { StoreUnavailableError } from '../../store/errors.js';

export const jiraConfig = registerAdapterConfig(
  adapterBase.extend({
    type: z.literal('jira'),
    /** e.g. https://example.atlassian.net */
    base_url: httpUrl,
    /**
     * Which Jira answers: `cloud` searches with /rest/api/3/search/jql,
     * `datacenter` (Server and Data Center) with /rest/api/2/search. Unset:
     * cloud when base_url is on atlassian.net, datacenter otherwise.
     */
    deployment: z.enum(['cloud', 'datacenter']).optional(),
    project: z.string().min(1),
    issue_type: z.string().min(1).default('Task'),
    /** a create's fields as templates, sent in the shapes Jira takes (jiraFields; docs/routing.md) */
    fields: fieldTemplates(
      /^(?:project|issuetype|priority|components|labels|customfield_\d{1,18})$/,
      'one of project, issuetype, priority, components, labels, customfield_<id>',
    ),
    /** Jira Cloud: the account e-mail and an API token; Server/Data Center: user and password */
    username: z.string().min(1),
    api_token: z.string().min(1),
    close_transition: z.string().min(1).default('Done'),
    reopen_transition: z.string().min(1).default('Reopen'),
  }),
);
export type JiraConfig = z.output<typeof jiraConfig>;

declare module '../../config/adapters.js' {
  interface AdapterConfigs {
    jira: JiraConfig;
  }
}

interface Issue {
  key: string;
  fields?: { status?: { statusCategory?: { key?: string } } };
  properties?: Record<string, unknown>;
}

/** The issue property onceonly writes on every issue it makes: whose key the issue is. */
export const JIRA_MARK = 'onceonly';
/** Labels onceonly keeps for itself: `onceonly` and every `onceonly-…`. A template's are dropped. */
export const RESERVED_JIRA_LABEL = /^onceonly(?:-|$)/i;

/** The mark of a key's issue: the tenant, kind and key it was made for. */
export const jiraMark = (e: Pick<OutboxEntry, 'tenant' | 'kind' | 'key'>) => ({ tenant: e.tenant, kind: e.kind, key: e.key });

/** Whether an issue found by search carries onceonly's mark for exactly this key (a label alone can be forged). */
function markedFor(issue: Issue, e: Pick<OutboxEntry, 'tenant' | 'kind' | 'key'>): boolean {
  const m = issue.properties?.[JIRA_MARK] as Record<string, unknown> | undefined;
  return m !== null && typeof m === 'object' && m.tenant === e.tenant && m.kind === e.kind && m.key === e.key;
}

/** The label that holds the key: opaque (a hash of tenant, kind and key), so any key makes a valid label. */
export function jiraLabel(e: Pick<OutboxEntry, 'tenant' | 'kind' | 'key'>): string {
  return `onceonly-${createHash('sha256').update(`${e.tenant}\u0000${e.kind}\u0000${e.key}`).digest('hex').slice(0, 24)}`;
}

/** The deployment a config means: as given, or read from the host (Atlassian hosts every Cloud site on atlassian.net). */
export function jiraDeployment(c: Pick<JiraConfig, 'deployment' | 'base_url'>): 'cloud' | 'datacenter' {
  return c.deployment ?? (/\.atlassian\.net$/i.test(new URL(c.base_url).hostname) ? 'cloud' : 'datacenter');
}

/** What Jira issues as an issue key (PROJECT-123); anything else is not kept or put in a path. */
const ISSUE_KEY = /^[A-Z][A-Z0-9_]*-\d{1,18}$/;

const JIRA_TEXT_MAX = 32_767;

/**
 * Rendered field templates in the shapes Jira's create takes: `project` by
 * key, `issuetype` and `priority` by name, `components` as names split at
 * commas, `labels` split at commas and spaces (a Jira label holds no space)
 * and added to the adapter's own, a custom field as its text. A rendered
 * label onceonly keeps for itself (`onceonly`, `onceonly-…`) is dropped:
 * what a producer sends can never give an issue another key's label.
 */
export function jiraFields(rendered: Record<string, string>, labels: string[]): Record<string, unknown> {
  const list = (s: string, at: RegExp) =>
    s
      .split(at)
      .map((x) => x.trim())
      .filter((x) => x !== '');
  const out: Record<string, unknown> = { labels };
  for (const [name, value] of Object.entries(rendered)) {
    if (name === 'project') out.project = { key: value };
    else if (name === 'issuetype' || name === 'priority') out[name] = { name: value };
    else if (name === 'components') out.components = list(value, /,/).map((n) => ({ name: n }));
    else if (name === 'labels') out.labels = [...new Set([...labels, ...list(value, /[\s,]+/).filter((l) => !RESERVED_JIRA_LABEL.test(l))])];
    else out[name] = value;
  }
  return out;
}
/** Jira refuses a summary with a line break or over 255 characters: one line, cut to fit. */
export const jiraSummary = (e: Pick<OutboxEntry, 'summary' | 'kind' | 'key'>) => cutText(oneLine(e.summary) || `${e.kind} ${e.key}`, 255);
/** Jira refuses a text field or comment over 32,767 characters: a longer one is cut, and says so. */
export const jiraText = (s: string) => cutText(s, JIRA_TEXT_MAX, `\n… (cut to Jira's limit of ${JIRA_TEXT_MAX.toLocaleString('en')} characters)`);

/**
 * Jira REST. Upsert by key: the key's issue is the one onceonly recorded
 * when it made it (the tickets facet), read back by its issue key, which
 * Jira answers consistently. Search by the key's label is only the fallback,
 * for an issue made before anything was recorded, or while the store is
 * unreachable: Jira Cloud's search is eventually consistent, and an issue
 * made a moment ago may be missing from it. Then it creates, comments
 * (update), transitions (close), or reopens a done issue a create finds; a
 * create that lost the race to record its issue is merged into the winner.
 */
export function jiraAdapter(c: JiraConfig, deps: AdapterDeps): Adapter {
  const kinds = kindsOf(c.kinds, ['incident', 'violation']);
  const base = c.base_url.replace(/\/+$/, '');
  const api = `${base}/rest/api/2`;
  const searchUrl = jiraDeployment(c) === 'cloud' ? `${base}/rest/api/3/search/jql` : `${api}/search`;
  const render = fieldRenderer(c.fields, deps);
  const call = restCaller({ accept: 'application/json', 'content-type': 'application/json', authorization: basicAuth(c.username, c.api_token) }, c, deps);
  const owner = (e: OutboxEntry): TicketOwner => ({ adapter: c.name, tenant: e.tenant, kind: e.kind, key: e.key });

  /**
   * The oldest issue carrying the key's label and onceonly's mark for exactly
   * this key (a later one can only be a raced duplicate, merged into it). The
   * label only finds candidates: anyone who can make an issue can give it a
   * label, so an issue is adopted only when its `onceonly` property, written
   * by onceonly's own create, names this tenant, kind and key.
   */
  async function search(e: OutboxEntry): Promise<Issue | null> {
    const q = new URLSearchParams({ jql: `labels = "${jiraLabel(e)}" ORDER BY key ASC`, fields: 'status', properties: JIRA_MARK, maxResults: '20' });
    const res = await call(`${searchUrl}?${q}`, 'GET');
    const issues = (res.body as { issues?: Issue[] } | null)?.issues;
    if (!Array.isArray(issues)) throw new Error(`Jira answered a search without an issues list: ${res.text.slice(0, 200)}`);
    return issues.find((i) => markedFor(i, e)) ?? null;
  }

  /** One issue by its key, read where Jira is consistent; null when it no longer exists. */
  async function read(key: string): Promise<Issue | null> {
    if (!ISSUE_KEY.test(key)) return null;
    try {
      return (await call(`${api}/issue/${key}?fields=status`, 'GET')).body as Issue;
    } catch (err) {
      if (err instanceof HttpFailure && err.result.reason === 'http_404') return null;
      throw err;
    }
  }

  /** A tickets call, or `unreachable` when the store cannot answer now (the caller falls back to search). */
  async function recorded<T>(op: () => Promise<T>): Promise<T | 'unreachable'> {
    try {
      return await op();
    } catch (err) {
      if (err instanceof StoreUnavailableError) return 'unreachable';
      throw err;
    }
  }

  /** Records `issue` as the key's; answers the issue that holds (another adapter's, when it recorded first). */
  async function claim(e: OutboxEntry, issue: Issue): Promise<Issue | 'unreachable'> {
    const held = await recorded(() => deps.tickets.claim(owner(e), issue.key, TICKET_MEMORY_MS));
    if (held === 'unreachable') return held;
    if (held === issue.key) return issue;
    return (await read(held)) ?? issue;
  }

  /** The key's issue: the recorded one, else (recording it) the oldest a search finds. */
  async function find(e: OutboxEntry): Promise<{ issue: Issue | null; store: boolean }> {
    const ref = await recorded(() => deps.tickets.find(owner(e), TICKET_MEMORY_MS));
    if (ref !== 'unreachable' && ref !== null) {
      const issue = await read(ref);
      if (issue) return { issue, store: true };
      // Deleted in Jira: forget it, and look for another.
      await recorded(() => deps.tickets.forget(owner(e), ref));
    }
    const found = await search(e);
    if (ref === 'unreachable') return { issue: found, store: false };
    if (!found) return { issue: null, store: true };
    const held = await claim(e, found);
    return held === 'unreachable' ? { issue: found, store: false } : { issue: held, store: true };
  }

  async function transition(issue: Issue, name: string): Promise<void> {
    const res = await call(`${api}/issue/${issue.key}/transitions`, 'GET');
    const all = (res.body as { transitions?: Array<{ id: string; name: string }> } | null)?.transitions ?? [];
    const t = all.find((x) => x.name.toLowerCase() === name.toLowerCase());
    if (!t)
      throw new Error(
        `Jira ticket ${issue.key} has no transition named ${JSON.stringify(name)} from its status (has: ${all.map((x) => x.name).join(', ') || 'none'})`,
      );
    await call(`${api}/issue/${issue.key}/transitions`, 'POST', { transition: { id: t.id } });
  }

  const comment = (issue: Issue, e: OutboxEntry) =>
    call(`${api}/issue/${issue.key}/comment`, 'POST', { body: jiraText(`onceonly ${e.action}:\n${describe(e)}`) });
  const isDone = (issue: Issue) => issue.fields?.status?.statusCategory?.key === 'done';

  /** A create or change for a ticket that exists: reopen it if a create finds it done, and comment. */
  async function onto(found: Issue, e: OutboxEntry): Promise<Done> {
    const reopen = e.action === 'create' && isDone(found);
    if (reopen) await transition(found, c.reopen_transition);
    await comment(found, e);
    return { detail: `${reopen ? 'reopened' : 'commented'} ${found.key}`, ticket: { issue: found.key } };
  }

  /** `made` duplicates `older`: say so, close it, and apply the change to the older one. */
  async function merge(made: Issue, older: Issue, e: OutboxEntry): Promise<Done> {
    await call(`${api}/issue/${made.key}/comment`, 'POST', { body: `Duplicate of ${older.key} (onceonly: concurrent create); closed.` });
    await transition(made, c.close_transition);
    await onto(older, e);
    return { detail: `merged ${made.key} into ${older.key}`, ticket: { issue: older.key } };
  }

  return defineAdapter(
    c,
    (e) => kinds.has(e.kind),
    async (job) => {
      const e = job.entry;
      const { issue: found, store } = await find(e);
      if (e.action === 'close') {
        if (!found || isDone(found)) return 'nothing to close';
        await transition(found, c.close_transition);
        return { detail: `closed ${found.key}`, ticket: { issue: found.key } };
      }
      if (found) return onto(found, e);
      const res = await call(`${api}/issue`, 'POST', {
        fields: {
          project: { key: c.project },
          issuetype: { name: c.issue_type },
          summary: jiraSummary(e),
          description: jiraText(describe(e)),
          ...jiraFields(render(e), ['onceonly', jiraLabel(e)]),
        },
        // Whose issue this is, where only onceonly's create writes it: what a search adopts by.
        properties: [{ key: JIRA_MARK, value: jiraMark(e) }],
      });
      const key = (res.body as { key?: unknown } | null)?.key;
      if (typeof key !== 'string' || !ISSUE_KEY.test(key)) throw new Error(`Jira answered a create without an issue key: ${res.text.slice(0, 200)}`);
      const made: Issue = { key, fields: { status: { statusCategory: { key: 'new' } } } };
      // Jira cannot refuse a second issue with the same label, and two creates
      // can race past the lookup (replicas failing open at once each deliver
      // their own provisional CREATE). The store's claim picks one winner for
      // every racer; without the store, a search picks the oldest, as far as
      // Jira's index has caught up.
      const held = store ? await claim(e, made) : 'unreachable';
      const winner = held === 'unreachable' ? ((await search(e)) ?? made) : held;
      return winner.key === made.key ? { detail: `created ${made.key}`, ticket: { issue: made.key } } : merge(made, winner, e);
    },
  );
}
