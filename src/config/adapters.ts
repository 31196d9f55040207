import { z } from 'zod';
import { LABEL_NAME } from '../core/matcher.js';
import { parseTemplate, TemplateError } from '../core/template.js';

/**
 * Adapters' config, as the config file declares it. Each adapter declares its
 * own fields beside its code and registers them here (the config layer knows
 * no adapter): at run time with `registerAdapterConfig`, for the types by
 * adding itself to `AdapterConfigs` (declaration merging). Loading
 * `delivery/adapters/index.ts` registers every adapter; the library entry,
 * the CLI and the server do.
 */

// biome-ignore lint/suspicious/noEmptyInterface: filled by each adapter's module.
export interface AdapterConfigs {}
/** An adapter's name: what routes name as receivers and deliveries carry. */
export const ADAPTER_NAME = /^[A-Za-z0-9_-]{1,64}$/;

export type AdapterConfig = AdapterConfigs[keyof AdapterConfigs];

/** Fields every adapter has. `name` goes into delivery ids and metric labels, so it is kept plain. */
export const adapterBase = z.strictObject({
  name: z.string().regex(ADAPTER_NAME, 'must be 1..64 letters, digits, _ or -'),
  /** which entries it takes; each type has its own default */
  kinds: z
    .array(z.enum(['incident', 'violation', 'event']))
    .min(1)
    .optional(),
  /** receive groups of incidents (grouping) instead of single incidents */
  grouped: z.boolean().default(false),
  /** per HTTP call (or MQTT publish) */
  timeout_ms: z.number().int().positive().default(10_000),
});

/** Fields one adapter may template, and characters one template may hold. */
export const MAX_FIELDS = 64;
export const MAX_TEMPLATE = 4096;

/**
 * An adapter's `fields:`: the target field's name (as `names` allows, which
 * `what` describes) → a Liquid template (core/template.ts), each parsed when
 * the config is loaded, so a bad one stops the start (or a reload keeps the
 * config in force) with the adapter's field named.
 */
export const fieldTemplates = (names: RegExp, what: string) =>
  z
    .record(z.string(), z.string().max(MAX_TEMPLATE, `a template is at most ${MAX_TEMPLATE} characters`))
    .superRefine((fields, ctx) => {
      const n = Object.keys(fields).length;
      if (n > MAX_FIELDS) ctx.addIssue({ code: 'custom', message: `at most ${MAX_FIELDS} fields (${n} given)` });
      for (const [name, source] of Object.entries(fields)) {
        // Checked here rather than as the record's key schema, whose refusal does not say what a name must be.
        if (!names.test(name)) {
          ctx.addIssue({ code: 'custom', path: [name], message: `must be ${what}` });
          continue;
        }
        try {
          parseTemplate(source);
        } catch (err) {
          if (!(err instanceof TemplateError)) throw err;
          ctx.addIssue({ code: 'custom', path: [name], message: `the template does not parse: ${err.message}` });
        }
      }
    })
    .default({});

/** Config `lookups:`: tables a field template reads (`{{ lookups.groups[labels.region] }}`), name → value → value. */
export const lookupsConfig = z
  .record(
    z.string().regex(LABEL_NAME, 'a table name is a letter or _, then letters, digits or _'),
    z.record(z.string().max(4096), z.string().max(4096)).superRefine((t, ctx) => {
      const n = Object.keys(t).length;
      if (n > 10_000) ctx.addIssue({ code: 'custom', message: `a table holds at most 10,000 values (${n} given)` });
    }),
  )
  .superRefine((tables, ctx) => {
    const n = Object.keys(tables).length;
    if (n > 64) ctx.addIssue({ code: 'custom', message: `at most 64 tables (${n} given)` });
  })
  .default({});

type AdapterSchema = z.ZodObject<{ type: z.ZodLiteral<string> } & z.ZodRawShape>;
const registered = new Map<string, AdapterSchema>();

/** Adds one adapter type's config schema; returns it, so the adapter keeps its own typed reference. */
export function registerAdapterConfig<T extends AdapterSchema>(schema: T): T {
  registered.set(String(schema.shape.type.value), schema);
  return schema;
}

/** The types registered so far (for messages and tests). */
export const adapterTypes = () => [...registered.keys()];

let union: z.ZodType | null = null;
const oneAdapter = z.lazy(() => {
  if (registered.size === 0) return z.never({ message: 'no adapter types are registered: import delivery/adapters/index.js first' });
  // Built once, after every adapter module has registered (they load before any config is parsed).
  union ??= z.discriminatedUnion('type', [...registered.values()] as [AdapterSchema, ...AdapterSchema[]]);
  return union;
}) as unknown as z.ZodType<AdapterConfig, { type: string; name: string; [field: string]: unknown }>;

export const adaptersConfig = z
  .array(oneAdapter)
  .default([])
  .superRefine((list, ctx) => {
    const seen = new Set<string>();
    list.forEach((a, i) => {
      if (seen.has(a.name))
        ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `adapter name ${JSON.stringify(a.name)} is used twice; names must be unique` });
      seen.add(a.name);
    });
  });
