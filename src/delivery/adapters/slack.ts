import { z } from 'zod';
import type { Adapter } from '../adapter.js';
import { pages } from '../adapter.js';
import type { OutboxEntry } from '../../core/outbox.js';

import { defineAdapter, fieldRenderer, httpUrl, kindsOf, restCaller, type AdapterDeps } from './common.js';
import { adapterBase, fieldTemplates, registerAdapterConfig } from '../../config/adapters.js';

export const slackConfig = registerAdapterConfig(
  adapterBase.extend({
    type: z.literal('slack'),
    /** an incoming-webhook URL */
    url: httpUrl,
    /** `text`: the message as a template; what it inserts is escaped as Slack requires (docs/routing.md) */
    fields: fieldTemplates(/^text$/, 'text (the one field a Slack message takes)'),
  }),
);
export type SlackConfig = z.output<typeof slackConfig>;

declare module '../../config/adapters.js' {
  interface AdapterConfigs {
    slack: SlackConfig;
  }
}

const ICON: Record<string, string> = {
  create: ':rotating_light:',
  update: ':arrows_counterclockwise:',
  close: ':white_check_mark:',
  notify: ':information_source:',
};

/**
 * Text as Slack must receive it: `&`, `<` and `>` escaped, so a summary cannot
 * ping a channel (`<!channel>`), mention someone or hide a link (`<url|text>`).
 */
export const slackEscape = (t: string) => t.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export function slackText(e: OutboxEntry): string {
  const tenant = e.tenant === 'default' ? '' : `, ${slackEscape(e.tenant)}`;
  return `${ICON[e.action] ?? ''} *${e.action}* ${e.kind} \`${slackEscape(e.key)}\` (${slackEscape(e.severity)}${tenant}): ${slackEscape(e.summary || '')}`.trim();
}

/**
 * A notify channel (incoming webhook): device transitions, the violations the
 * decision table pages for, and CRITICAL incidents. Chat cannot upsert, so an
 * ambiguous failure (the post landed, the answer was lost) can repeat a line.
 */
export function slackAdapter(c: SlackConfig, deps: AdapterDeps): Adapter {
  const kinds = kindsOf(c.kinds, ['incident', 'violation', 'event']);
  const call = restCaller({ 'content-type': 'application/json' }, c, deps);
  const render = fieldRenderer(c.fields, deps, slackEscape);
  return defineAdapter(
    c,
    (e) => kinds.has(e.kind) && pages(e) && (e.kind !== 'incident' || e.severity === 'CRITICAL'),
    async (job) => {
      const text = c.fields.text === undefined ? slackText(job.entry) : render(job.entry).text;
      await call(c.url, 'POST', { text });
    },
  );
}
