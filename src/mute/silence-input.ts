import { z } from 'zod';
import { parseWith, ValidationError } from '../core/validation.js';
import { boundedText, freeText, identityText, MAX_LABEL_VALUE } from '../inputs/limits.js';
import { compileMatcher, MatcherError, type Matcher, type MatcherBounds } from '../core/matcher.js';

/** Matchers one silence may have. */
export const MAX_SILENCE_MATCHERS = 64;
/** What a posted silence may hold. */
export interface SilenceBounds extends MatcherBounds {
  /**
   * Characters of its matchers, `createdBy` and `comment` together
   * (limits.silence_chars). With the count of silences a tenant keeps, it
   * bounds what a tenant's silences hold in the store and in every
   * replica's copy (64 matchers of 4,096 characters once made one silence
   * 262 KB). Unset: no bound.
   */
  maxChars?: number;
}
/** Characters of `createdBy` and of `comment`. */
export const MAX_SILENCE_TEXT = { createdBy: 256, comment: 4096 };

const time = z.string().refine((t) => !Number.isNaN(Date.parse(t)), 'must be an RFC 3339 date-time');

const matcherSchema = z.object({
  name: z.string().min(1).max(128),
  value: boundedText(MAX_LABEL_VALUE),
  isRegex: z.boolean(),
  /** Alertmanager's default when a client leaves it out (API v2 before 0.22) */
  isEqual: z.boolean().default(true),
});

/** Alertmanager API v2's PostableSilence: what `amtool silence add` and `update` send. */
export const postableSilenceSchema = z.object({
  id: z.string().max(64).optional(),
  matchers: z.array(matcherSchema).min(1, 'a silence needs at least one matcher').max(MAX_SILENCE_MATCHERS),
  startsAt: time,
  endsAt: time,
  // The text rules of every other field: no control characters (line breaks and tabs in a comment),
  // no lone surrogates. A lone surrogate once made a stored silence impossible to expire on Redis.
  createdBy: identityText(MAX_SILENCE_TEXT.createdBy),
  comment: freeText(MAX_SILENCE_TEXT.comment, 1),
});

export interface SilenceInput {
  id?: string;
  matchers: Matcher[];
  startsAt: number;
  endsAt: number;
  createdBy: string;
  comment: string;
}

/**
 * A posted silence, checked as Alertmanager checks one: the matchers compile
 * (RE2), at least one of them does not match the empty string (a silence of
 * everything is refused), the end is after the start and not in the past. A
 * start in the past becomes now.
 */
export function parseSilence(body: unknown, now: number, bounds: SilenceBounds = {}): SilenceInput {
  const p = parseWith(postableSilenceSchema, body, 'silence');
  const refuse = (path: string, message: string): never => {
    throw new ValidationError(`invalid silence: ${path}: ${message}`, [{ path, message }]);
  };
  const chars = p.matchers.reduce((n, m) => n + m.name.length + m.value.length, p.createdBy.length + p.comment.length);
  if (bounds.maxChars !== undefined && chars > bounds.maxChars)
    refuse(
      'matchers',
      `a silence holds at most ${bounds.maxChars} characters of matchers, createdBy and comment together (limits.silence_chars); this one holds ${chars}`,
    );
  const matchers = p.matchers.map((m, i) => {
    try {
      return compileMatcher(m, bounds);
    } catch (err) {
      return refuse(`matchers.${i}`, err instanceof MatcherError ? err.message : String(err));
    }
  });
  if (matchers.every((m) => m.test({}))) refuse('matchers', 'at least one matcher must not match the empty string (a silence of everything)');
  const startsAt = Math.max(Date.parse(p.startsAt), now);
  const endsAt = Date.parse(p.endsAt);
  if (endsAt <= now) refuse('endsAt', 'must not be in the past');
  if (endsAt <= startsAt) refuse('endsAt', 'must be after startsAt');
  return {
    ...(p.id ? { id: p.id } : {}),
    matchers: p.matchers.map(({ name, value, isRegex, isEqual }) => ({ name, value, isRegex, isEqual })),
    startsAt,
    endsAt,
    createdBy: p.createdBy,
    comment: p.comment,
  };
}
