import { z } from 'zod';
import type { Adapter } from '../adapter.js';
import { pages } from '../adapter.js';
import type { OutboxEntry } from '../../core/outbox.js';
import { pagerdutyDedupKey } from '../identity.js';

import { cutText, defineAdapter, fieldRenderer, httpUrl, kindsOf, restCaller, type AdapterDeps } from './common.js';
import { adapterBase, fieldTemplates, registerAdapterConfig } from '../../config/adapters.js';

export const pagerdutyConfig = registerAdapterConfig(
  adapterBase.extend({
    type: z.literal('pagerduty'),
    routing_key: z.string().min(1),
    url: httpUrl.default('https://events.pagerduty.com/v2/enqueue'),
    source: z.string().min(1).default('onceonly'),
    /** payload fields as templates: component, group, class, custom_details (docs/routing.md) */
    fields: fieldTemplates(/^(?:component|group|class|custom_details)$/, 'one of component, group, class, custom_details'),
  }),
);
export type PagerdutyConfig = z.output<typeof pagerdutyConfig>;

declare module '../../config/adapters.js' {
  interface AdapterConfigs {
    pagerduty: PagerdutyConfig;
  }
}

const SEVERITY: Record<string, string> = { CRITICAL: 'critical', MAJOR: 'error', MINOR: 'warning', INFO: 'info' };

/** Events API v2: create and update trigger (a re-trigger updates the alert), an acknowledgement acknowledges, close resolves; dedup_key is the key, with its tenant. */
export function pagerdutyEvent(c: Pick<PagerdutyConfig, 'routing_key' | 'source'>, e: OutboxEntry, fields: Record<string, string> = {}) {
  const dedup_key = pagerdutyDedupKey(e.tenant, e.key);
  if (e.action === 'close') return { routing_key: c.routing_key, event_action: 'resolve', dedup_key };
  // An acknowledgement that came in (a PagerDuty acknowledge) goes out as one, not as a re-trigger.
  if (e.action === 'update' && e.data.acknowledged === true) return { routing_key: c.routing_key, event_action: 'acknowledge', dedup_key };
  return {
    routing_key: c.routing_key,
    event_action: 'trigger',
    dedup_key,
    payload: {
      summary: cutText(e.summary || `${e.kind} ${e.key}`, 1024),
      source: c.source,
      severity: SEVERITY[e.severity] ?? 'info',
      timestamp: new Date(e.at).toISOString(),
      custom_details: { ...e.data, tenant: e.tenant, kind: e.kind, action: e.action },
      ...fields,
    },
  };
}

/** Pages: incidents and the violations the decision table says page. */
export function pagerdutyAdapter(c: PagerdutyConfig, deps: AdapterDeps): Adapter {
  const kinds = kindsOf(c.kinds, ['incident', 'violation']);
  const call = restCaller({ 'content-type': 'application/json' }, c, deps);
  const render = fieldRenderer(c.fields, deps);
  return defineAdapter(
    c,
    (e) => kinds.has(e.kind) && pages(e),
    async (job) => {
      const event = pagerdutyEvent(c, job.entry, render(job.entry));
      await call(c.url, 'POST', event);
      return { detail: event.event_action, ticket: { dedup_key: event.dedup_key } };
    },
  );
}
