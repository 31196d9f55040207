import { z } from 'zod';

/**
 * The configuration file's schema: the one place config is declared; its
 * types come from here. Every field is optional; unknown fields are errors so
 * a typo never silently means "default".
 */

const positiveInt = z.number().int().positive();

const ttlOverride = z
  .strictObject({
    fault_class: z.string().min(1).optional(),
    element_prefix: z.string().min(1).optional(),
    ttl_seconds: positiveInt,
  })
  .refine((o) => (o.fault_class === undefined) !== (o.element_prefix === undefined), {
    message: 'give exactly one of fault_class or element_prefix',
  });

export const configSchema = z.strictObject({
  incidents: z
    .strictObject({
      ttl_seconds: positiveInt.default(3600),
      /**
       * A SUPPRESS whose claim was made at most this long ago is reported as
       * `lost_race` (a concurrent copy) rather than `unchanged` (a later re-fire).
       */
      race_window_ms: z.number().int().nonnegative().default(1000),
      /** First match wins: the seed's "shorter window for flap-prone tiers". */
      ttl_overrides: z.array(ttlOverride).default([]),
      /**
       * An expired incident that was never closed is kept this long, so the next
       * arrival is reported as CREATE/expired (a premature expiry). Read at start.
       */
      expired_grace_seconds: z.number().int().nonnegative().default(600),
    })
    .default({ ttl_seconds: 3600, race_window_ms: 1000, ttl_overrides: [], expired_grace_seconds: 600 }),
  /** Shared stores (Redis): when to stop waiting and decide locally. Read at start. */
  failopen: z
    .strictObject({
      timeout_ms: positiveInt.default(50),
      probe_interval_ms: positiveInt.default(250),
      journal_path: z.string().min(1).default('./data/onceonly-journal.db'),
    })
    .default({ timeout_ms: 50, probe_interval_ms: 250, journal_path: './data/onceonly-journal.db' }),
  violations: z.strictObject({ window_seconds: positiveInt.default(300) }).default({ window_seconds: 300 }),
  events: z
    .strictObject({
      retention_seconds: positiveInt.default(86400),
      stale_after_seconds: positiveInt.default(300),
    })
    .default({ retention_seconds: 86400, stale_after_seconds: 300 }),
  delivery: z
    .strictObject({
      max_retries: z.number().int().nonnegative().default(4),
      base_delay_ms: positiveInt.default(500),
      max_delay_ms: positiveInt.default(8000),
    })
    .default({ max_retries: 4, base_delay_ms: 500, max_delay_ms: 8000 }),
  // Adapters and tenants are part of the file format, but the code that honours
  // them is not here yet: accepting them would promise delivery or access
  // control that does not happen, so they are refused until it is.
  adapters: z
    .unknown()
    .optional()
    .refine((v) => v === undefined, { message: 'adapters are not supported by this version yet' }),
  tenants: z
    .unknown()
    .optional()
    .refine((v) => v === undefined, { message: 'tenants are not supported by this version yet' }),
});

export type Config = z.output<typeof configSchema>;
export type ConfigInput = z.input<typeof configSchema>;

export const defaultConfig: Config = configSchema.parse({});
