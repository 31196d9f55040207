import { z } from 'zod';
import { matcherList } from './matchers.js';

/**
 * Alertmanager's `inhibit_rules`: while a live incident matches
 * `source_matchers`, keys that match `target_matchers` and have the same
 * values of the `equal` labels are muted. For every tenant, each within its own.
 */
export const inhibitionConfig = z
  .array(
    z.strictObject({
      source_matchers: matcherList(1),
      target_matchers: matcherList(1),
      equal: z
        .array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be a label name'))
        .max(16)
        .default([]),
    }),
  )
  .max(256)
  .default([]);

export type InhibitionConfig = z.output<typeof inhibitionConfig>;
