import { z } from 'zod';
import { MatcherError, parseMatcher } from '../core/matcher.js';

/** A list of matchers in Alertmanager's text form (`name="value"`, `=~`, `!=`, `!~`), each checked where the config is loaded. */
export const matcherList = (min: number, minMessage?: string) =>
  z
    .array(z.string().max(4096))
    .min(min, minMessage)
    .max(64)
    .superRefine((ms, ctx) => {
      ms.forEach((m, i) => {
        try {
          parseMatcher(m);
        } catch (err) {
          if (!(err instanceof MatcherError)) throw err;
          ctx.addIssue({ code: 'custom', path: [i], message: err.message });
        }
      });
    });
