import { z } from 'zod';
import { matcherList } from './matchers.js';
import { parseTimeInterval, TimeIntervalError } from '../core/time-intervals.js';

const rangeList = z.array(z.string().max(64)).max(64);

/** Alertmanager's `time_intervals` entry, checked as Alertmanager checks it. */
const timeInterval = z
  .strictObject({
    times: z
      .array(z.strictObject({ start_time: z.string(), end_time: z.string() }))
      .max(64)
      .optional(),
    weekdays: rangeList.optional(),
    days_of_month: rangeList.optional(),
    months: rangeList.optional(),
    years: rangeList.optional(),
    location: z.string().max(64).optional(),
  })
  .superRefine((t, ctx) => {
    try {
      parseTimeInterval(t);
    } catch (err) {
      if (!(err instanceof TimeIntervalError)) throw err;
      ctx.addIssue({ code: 'custom', message: err.message });
    }
  });

/**
 * Maintenance windows: keys matching `matchers` are muted (their deliveries
 * held) while one of `time_intervals` is in force. For every tenant: the
 * config is the operator's. Reloaded with the rest of the config on SIGHUP.
 */
export const maintenanceConfig = z
  .array(
    z.strictObject({
      name: z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, 'must be 1..64 letters, digits, _ . -'),
      matchers: matcherList(1, 'a window needs at least one matcher (kind=~".+" for everything)'),
      time_intervals: z.array(timeInterval).min(1).max(64),
    }),
  )
  .max(256)
  .default([])
  .superRefine((ws, ctx) => {
    const seen = new Set<string>();
    ws.forEach((w, i) => {
      if (seen.has(w.name)) ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `the name ${w.name} is used twice` });
      seen.add(w.name);
    });
  });

export type MaintenanceConfig = z.output<typeof maintenanceConfig>;
