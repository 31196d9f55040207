import type { Adapter } from '../adapter.js';
import type { AdapterConfig } from '../../config/adapters.js';
import type { AdapterDeps } from './common.js';
import { jiraAdapter } from './jira.js';
import { mqttAdapter } from './mqtt.js';
import { pagerdutyAdapter } from './pagerduty.js';
import { servicenowAdapter } from './servicenow.js';
import { slackAdapter } from './slack.js';
import { webhookAdapter } from './webhook.js';

/**
 * Every adapter. Importing this module registers each one's config schema
 * with the config layer (config/adapters.ts), so a config naming it parses.
 */
export type { AdapterConfig };

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
