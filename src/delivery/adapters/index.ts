import { z } from 'zod';
import type { Adapter } from '../adapter.js';
import type { AdapterDeps } from './common.js';
import { jiraAdapter, jiraConfig } from './jira.js';
import { mqttAdapter, mqttConfig } from './mqtt.js';
import { pagerdutyAdapter, pagerdutyConfig } from './pagerduty.js';
import { servicenowAdapter, servicenowConfig } from './servicenow.js';
import { slackAdapter, slackConfig } from './slack.js';
import { webhookAdapter, webhookConfig } from './webhook.js';

/** One adapter's config: `type` picks the schema, each kept beside its adapter's code. */
export const adapterConfig = z.discriminatedUnion('type', [webhookConfig, servicenowConfig, jiraConfig, pagerdutyConfig, mqttConfig, slackConfig]);
export type AdapterConfig = z.output<typeof adapterConfig>;

export const adaptersConfig = z
  .array(adapterConfig)
  .default([])
  .superRefine((list, ctx) => {
    const seen = new Set<string>();
    list.forEach((a, i) => {
      if (seen.has(a.name)) ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `adapter name ${JSON.stringify(a.name)} is used twice; names must be unique` });
      seen.add(a.name);
    });
  });

export function createAdapter(c: AdapterConfig, deps: AdapterDeps): Adapter {
  switch (c.type) {
    case 'webhook':
      return webhookAdapter(c, deps);
    case 'servicenow':
      return servicenowAdapter(c, deps);
    case 'jira':
      return jiraAdapter(c, deps);
    case 'pagerduty':
      return pagerdutyAdapter(c, deps);
    case 'mqtt':
      return mqttAdapter(c, deps);
    case 'slack':
      return slackAdapter(c, deps);
  }
}
