import { z } from 'zod';
import { matcherList } from './matchers.js';

/**
 * Auto-pause: a matching key's `create` is held `seconds` after its decision;
 * a key that closes meanwhile delivers nothing (a transient fault pages nobody).
 */
export const autoPauseConfig = z
  .array(z.strictObject({ matchers: matcherList(1), seconds: z.number().int().positive().max(86_400) }))
  .max(256)
  .default([]);

/**
 * Flapping: a key created again after a close more than `max_transitions`
 * times inside `window_seconds` is flapping; its creates and closes are held
 * until it has kept one state for `quiet_seconds`, and that state is then
 * delivered once, marked `"flapping": true`.
 */
export const flappingConfig = z
  .strictObject({
    max_transitions: z.number().int().nonnegative().max(60).default(4),
    window_seconds: z.number().int().positive().default(600),
    quiet_seconds: z.number().int().positive().default(300),
  })
  .optional();

/**
 * Grouping: the live incidents of a tenant that share the `by` labels are one
 * group; adapters with `grouped: true` receive the group (one create
 * `wait_seconds` after its first member, an update per membership or severity
 * change, a close when its last member closes) instead of its members.
 */
export const groupingConfig = z
  .strictObject({
    by: z
      .array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be a label name'))
      .min(1)
      .max(16),
    wait_seconds: z.number().int().nonnegative().max(3600).default(30),
  })
  .optional();

export type GroupingConfig = NonNullable<z.output<typeof groupingConfig>>;
export type AutoPauseConfig = z.output<typeof autoPauseConfig>;
export type FlappingConfig = NonNullable<z.output<typeof flappingConfig>>;
