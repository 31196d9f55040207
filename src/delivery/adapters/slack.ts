import { z } from 'zod';
import type { Adapter } from '../adapter.js';
import { pages } from '../adapter.js';
import type { OutboxEntry } from '../../core/outbox.js';

import { defineAdapter, fieldRenderer, httpUrl, kindsOf, restCaller, type AdapterDeps } from './common.js';
import { slackWebApi } from './slack-web-api.js';
import { adapterBase, fieldTemplates, registerAdapterConfig } from '../../config/adapters.js';

export const slackConfig = registerAdapterConfig(
  adapterBase
    .extend({
      type: z.literal('slack'),
      /** an incoming-webhook URL: a line per change (chat cannot upsert, so an ambiguous failure can repeat one) */
      url: httpUrl.optional(),
      /** a bot token (xoxb-…) for the Web API: one message per key, edited in place */
      token: z
        .string()
        // Not checked for a prefix: bot tokens are xoxb-…, rotating ones xoxe.xoxb-…, and more may come.
        .regex(/^\S{8,512}$/, "must be a Slack bot token (xoxb-…, from the app's OAuth page): 8 to 512 characters, no spaces")
        .optional(),
      /** with `token`: the channel to post in, by id (C0123ABCD) or name (#alerts) */
      channel: z
        .string()
        .regex(/^[#@]?[A-Za-z0-9._-]{1,80}$/, 'must be a channel id (C0123ABCD) or name (#alerts)')
        .optional(),
      /** with `token`: also reply under the message for each change after it was posted */
      thread_replies: z.boolean().default(false),
      /** with `token`: the Web API's base (a proxy's, or a test's) */
      api_url: httpUrl.default('https://slack.com/api'),
      /** `text`: the message as a template; what it inserts is escaped as Slack requires (docs/routing.md) */
      fields: fieldTemplates(/^text$/, 'text (the one field a Slack message takes)'),
    })
    .superRefine((c, ctx) => {
      if ((c.url === undefined) === (c.token === undefined))
        ctx.addIssue({
          code: 'custom',
          path: ['url'],
          message: 'give either url (an incoming webhook) or token and channel (the Web API), not both or neither',
        });
      if (c.token !== undefined && c.channel === undefined)
        ctx.addIssue({ code: 'custom', path: ['channel'], message: 'the Web API (token) needs a channel to post in' });
      if (c.token === undefined && c.channel !== undefined)
        ctx.addIssue({ code: 'custom', path: ['channel'], message: 'an incoming webhook posts where it was made for: channel goes with token' });
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
 * A notify channel. With an incoming webhook (`url`): a line per change for
 * device transitions, the violations the decision table pages for, and
 * CRITICAL incidents; chat cannot upsert, so an ambiguous failure (the post
 * landed, the answer was lost) can repeat a line. With a bot token: one
 * message per key, edited in place (slack-web-api.ts), so it takes every
 * incident, each shown once in its current state.
 */
export function slackAdapter(c: SlackConfig, deps: AdapterDeps): Adapter {
  const kinds = kindsOf(c.kinds, ['incident', 'violation', 'event']);
  const render = fieldRenderer(c.fields, deps, slackEscape);
  const text = (e: OutboxEntry) => (c.fields.text === undefined ? slackText(e) : render(e).text!);
  if (c.token !== undefined && c.channel !== undefined) {
    const message = slackWebApi({ ...c, token: c.token, channel: c.channel }, deps);
    return defineAdapter(
      c,
      (e) => kinds.has(e.kind) && pages(e),
      (job) => message(job.entry, text(job.entry)),
    );
  }
  const url = c.url!;
  const call = restCaller({ 'content-type': 'application/json' }, c, deps);
  return defineAdapter(
    c,
    (e) => kinds.has(e.kind) && pages(e) && (e.kind !== 'incident' || e.severity === 'CRITICAL'),
    async (job) => {
      await call(url, 'POST', { text: text(job.entry) });
    },
  );
}
