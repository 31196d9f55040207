import { z } from 'zod';
import { MatcherError, parseMatcher } from '../core/matcher.js';

/**
 * The most a config matcher's regex may cost to compile (regex-cost.ts): the
 * highest `limits.regex_cost_per_matcher` may be set to. Judged before
 * compiling, so a pathological pattern is refused at once instead of
 * holding check-config or a start for seconds; the routing tree is then
 * held to the configured limits (schema.ts).
 */
export const CONFIG_MATCHER_MAX_COST = 100_000;

/** A list of matchers in Alertmanager's text form (`name="value"`, `=~`, `!=`, `!~`), each checked where the config is loaded. */
export const matcherList = (min: number, minMessage?: string) =>
  z
    .array(z.string().max(4096))
    .min(min, minMessage)
    .max(64)
    .superRefine((ms, ctx) => {
      ms.forEach((m, i) => {
        try {
          parseMatcher(m, { maxRegexCost: CONFIG_MATCHER_MAX_COST });
        } catch (err) {
          if (!(err instanceof MatcherError)) throw err;
          ctx.addIssue({ code: 'custom', path: [i], message: err.message });
        }
      });
    });
