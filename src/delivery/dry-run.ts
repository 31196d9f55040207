import type { Config } from '../config/schema.js';
import type { AdapterConfig } from '../config/adapters.js';
import type { OutboxEntry } from '../core/outbox.js';
import { entryAsSent, labelsOf } from '../inputs/labels.js';
import { reachedAdapters } from './routing.js';
import type { Labels } from '../core/matcher.js';
import { HttpFailure } from './http.js';
import { fieldRenderer } from './adapters/common.js';

export interface DryRun {
  /** the adapters the label set reaches, in the order `amtool config routes test` prints receivers */
  adapters: string[];
  /** each reached adapter's `fields`, rendered over the label set */
  fields: Record<string, Record<string, string>>;
  /** adapters whose fields did not render, and why (a delivery of such an entry would be a dead letter) */
  errors?: Record<string, string>;
}

const renderers = new WeakMap<AdapterConfig, ReturnType<typeof fieldRenderer>>();

/**
 * The renderer of adapter `name`'s `fields` under `config` (made once per
 * adapter config), or null when it has none: what the dry run and a
 * simulation render, as a delivery would.
 */
export function fieldsOf(config: Config, name: string): ReturnType<typeof fieldRenderer> | null {
  const a = config.adapters.find((x) => x.name === name);
  const templates = a && 'fields' in a ? a.fields : undefined;
  if (!a || !templates || Object.keys(templates).length === 0) return null;
  let render = renderers.get(a);
  if (!render) renderers.set(a, (render = fieldRenderer(templates, { lookups: () => config.lookups })));
  return render;
}

/**
 * Where a label set would go under `config`, and what each adapter's field
 * templates make of it: the routing tree walked as the CLI walks it (every
 * adapter without a tree), then each reached adapter's fields rendered over
 * the entry a live alert with these labels makes (`entryAsSent`: its kind,
 * key and severity from the labels of those names, where given).
 */
export async function dryRun(config: Config, tenant: string, sent: Labels): Promise<DryRun> {
  // Built as live routing builds them: the same function, over the entry a live alert with these labels makes.
  const routed = entryAsSent(sent, tenant);
  const adapters = reachedAdapters(config, labelsOf(routed));
  const entry: OutboxEntry = {
    tenant,
    kind: routed.kind,
    action: 'create',
    key: routed.key,
    severity: routed.severity,
    summary: sent.summary ?? '',
    data: routed.data,
    at: 0,
  };
  const fields: Record<string, Record<string, string>> = {};
  const errors: Record<string, string> = {};
  for (const name of new Set(adapters)) {
    const render = fieldsOf(config, name);
    if (!render) continue;
    try {
      fields[name] = render(entry);
    } catch (err) {
      if (!(err instanceof HttpFailure)) throw err;
      errors[name] = err.message;
    }
  }
  return { adapters, fields, ...(Object.keys(errors).length > 0 ? { errors } : {}) };
}
