import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { Adapter } from '../adapter.js';
import type { OutboxEntry } from '../../core/outbox.js';
import { basicAuth } from '../http.js';
import { defineAdapter, describe, httpUrl, kindsOf, restCaller, type AdapterDeps } from './common.js';
import { adapterBase, registerAdapterConfig } from '../../config/adapters.js';

export const jiraConfig = registerAdapterConfig(
  adapterBase.extend({
    type: z.literal('jira'),
    /** e.g. https://example.atlassian.net */
    base_url: httpUrl,
    project: z.string().min(1),
    issue_type: z.string().min(1).default('Task'),
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
}

/** The label that holds the key: opaque (a hash of tenant, kind and key), so any key makes a valid label. */
export function jiraLabel(e: Pick<OutboxEntry, 'tenant' | 'kind' | 'key'>): string {
  return `onceonly-${createHash('sha256').update(`${e.tenant}\u0000${e.kind}\u0000${e.key}`).digest('hex').slice(0, 24)}`;
}

/**
 * Jira REST v2. Upsert by key: the ticket carrying the key's label is found by
 * JQL (the oldest, if there are several), then created, commented on
 * (update), transitioned (close), or reopened when a closed one is created
 * again; a create that raced another one is merged into the older issue.
 */
export function jiraAdapter(c: JiraConfig, deps: AdapterDeps): Adapter {
  const kinds = kindsOf(c.kinds, ['incident', 'violation']);
  const api = `${c.base_url.replace(/\/+$/, '')}/rest/api/2`;
  const call = restCaller({ accept: 'application/json', 'content-type': 'application/json', authorization: basicAuth(c.username, c.api_token) }, c, deps);

  /** The key's issue: the oldest carrying its label (a later one can only be a raced duplicate, merged into it). */
  async function find(e: OutboxEntry): Promise<Issue | null> {
    const q = new URLSearchParams({ jql: `labels = "${jiraLabel(e)}" ORDER BY key ASC`, fields: 'status', maxResults: '1' });
    const res = await call(`${api}/search?${q}`, 'GET');
    const issues = (res.body as { issues?: Issue[] } | null)?.issues;
    if (!Array.isArray(issues)) throw new Error(`Jira answered a search without an issues list: ${res.text.slice(0, 200)}`);
    return issues[0] ?? null;
  }

  async function transition(issue: Issue, name: string): Promise<void> {
    const res = await call(`${api}/issue/${issue.key}/transitions`, 'GET');
    const all = (res.body as { transitions?: Array<{ id: string; name: string }> } | null)?.transitions ?? [];
    const t = all.find((x) => x.name.toLowerCase() === name.toLowerCase());
    if (!t) throw new Error(`Jira ticket ${issue.key} has no transition named ${JSON.stringify(name)} (has: ${all.map((x) => x.name).join(', ') || 'none'})`);
    await call(`${api}/issue/${issue.key}/transitions`, 'POST', { transition: { id: t.id } });
  }

  const comment = (issue: Issue, e: OutboxEntry) => call(`${api}/issue/${issue.key}/comment`, 'POST', { body: `onceonly ${e.action}:\n${describe(e)}` });
  const isDone = (issue: Issue) => issue.fields?.status?.statusCategory?.key === 'done';

  /** A create or change for a ticket that exists: reopen it if a create finds it done, and comment. */
  async function onto(found: Issue, e: OutboxEntry): Promise<string> {
    const reopen = e.action === 'create' && isDone(found);
    if (reopen) await transition(found, c.reopen_transition);
    await comment(found, e);
    return `${reopen ? 'reopened' : 'commented'} ${found.key}`;
  }

  return defineAdapter(
    c,
    (e) => kinds.has(e.kind),
    async (job) => {
      const e = job.entry;
      const found = await find(e);
      if (e.action === 'close') {
        if (!found || isDone(found)) return 'nothing to close';
        await transition(found, c.close_transition);
        return `closed ${found.key}`;
      }
      if (found) return onto(found, e);
      const res = await call(`${api}/issue`, 'POST', {
        fields: {
          project: { key: c.project },
          issuetype: { name: c.issue_type },
          summary: (e.summary || `${e.kind} ${e.key}`).slice(0, 250),
          description: describe(e),
          labels: ['onceonly', jiraLabel(e)],
        },
      });
      const made = (res.body as { key?: string } | null)?.key;
      // Jira cannot refuse a second ticket with the same label, and two creates
      // can race past the lookup (replicas failing open at once each deliver
      // their own provisional CREATE). Look again: if an older ticket holds the
      // key, this one is the duplicate: say so, close it, and apply the change
      // to the older one. Both racers converge on the oldest issue.
      const oldest = await find(e);
      if (made && oldest && oldest.key !== made) {
        await call(`${api}/issue/${made}/comment`, 'POST', { body: `Duplicate of ${oldest.key} (onceonly: concurrent create); closed.` });
        await transition({ key: made }, c.close_transition);
        await onto(oldest, e);
        return `merged ${made} into ${oldest.key}`;
      }
      return `created ${made ?? ''}`.trim();
    },
  );
}
