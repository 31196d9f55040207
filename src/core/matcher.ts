import { RE2JS } from 're2js';
import { regexCost } from './regex-cost.js';

/**
 * Alertmanager's label matchers, with its semantics: `=` and `!=` compare the
 * whole value, `=~` and `!~` are RE2 regular expressions anchored at both
 * ends, and a label that is absent has the value "". Regexes run on RE2 (a
 * linear-time engine, as Go's), never on JavaScript's backtracking one: a
 * matcher is written by a tenant, and a pattern like `(a+)+b` must not be able
 * to stall a replica.
 */
export interface Matcher {
  name: string;
  value: string;
  isRegex: boolean;
  /** false: the negated form (`!=`, `!~`) */
  isEqual: boolean;
}

export type Labels = Readonly<Record<string, string>>;

/** A matcher ready to test labels; building one checks its regex. */
export interface CompiledMatcher extends Matcher {
  test(labels: Labels): boolean;
}

export class MatcherError extends Error {
  readonly code = 'matcher_invalid';
}

/**
 * Label names onceonly sets itself on every entry, whatever a producer sends
 * under them: what the entry is (`kind`, `dedup_key`), onceonly's own
 * severity, and the caller's tenant.
 */
export const RESERVED_LABELS: readonly string[] = ['kind', 'dedup_key', 'oo_severity', 'tenant'];

/** Label names as Alertmanager accepts them in its classic form; also the input's field names. */
export const LABEL_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export interface MatcherBounds {
  /** The largest regex program (regex-cost.ts) a matcher may compile to; unset: no bound (the operator's own config). */
  maxRegexCost?: number;
}

/** What a matcher costs to compile and to run per character: its regex's estimated program size; 0 for `=` and `!=`. */
export const matcherCost = (m: Matcher): number => (m.isRegex ? regexCost(`^(?:${m.value})$`) : 0);

export function compileMatcher(m: Matcher, bounds: MatcherBounds = {}): CompiledMatcher {
  if (!LABEL_NAME.test(m.name)) throw new MatcherError(`matcher name ${JSON.stringify(m.name)} is not a label name ([A-Za-z_][A-Za-z0-9_]*)`);
  let hit: (v: string) => boolean;
  if (m.isRegex) {
    // Judged before compiling: compiling is the costly step, and its cost is what is bounded.
    const cost = matcherCost(m);
    if (bounds.maxRegexCost !== undefined && cost > bounds.maxRegexCost) {
      throw new MatcherError(
        `matcher ${m.name}: the regex would compile to about ${cost} instructions; at most ${bounds.maxRegexCost} (limits.regex_cost_per_matcher)`,
      );
    }
    let re: RE2JS;
    try {
      // Checked as written first, so an error quotes the tenant's pattern, not the anchored one.
      RE2JS.compile(m.value);
      re = RE2JS.compile(`^(?:${m.value})$`);
    } catch (err) {
      throw new MatcherError(`matcher ${m.name}: ${JSON.stringify(m.value)} is not an RE2 regex: ${(err as Error).message}`);
    }
    hit = (v) => re.matches(v);
  } else {
    hit = (v) => v === m.value;
  }
  return { ...m, test: (labels) => hit(labelValue(labels, m.name)) === m.isEqual };
}

/**
 * A label's value; "" when the set does not hold it, as in Alertmanager.
 * Own labels only: a name every object inherits (`constructor`, `toString`)
 * would otherwise read as a function.
 */
export const labelValue = (labels: Labels, name: string): string => (Object.hasOwn(labels, name) ? (labels[name] ?? '') : '');

/** True when every matcher matches: the AND of Alertmanager's matcher lists. */
export const matchesAll = (matchers: readonly CompiledMatcher[], labels: Labels) => matchers.every((m) => m.test(labels));

const OPERATORS = [
  ['!~', { isRegex: true, isEqual: false }],
  ['=~', { isRegex: true, isEqual: true }],
  ['!=', { isRegex: false, isEqual: false }],
  ['=', { isRegex: false, isEqual: true }],
] as const;

/**
 * Parses one matcher in Alertmanager's text form: `name="value"`,
 * `name!="value"`, `name=~"regex"`, `name!~"regex"`. The value may be
 * double-quoted (with `\"`, `\\` and `\n` escapes) or bare.
 */
export function parseMatcher(text: string, bounds: MatcherBounds = {}): CompiledMatcher {
  return compileMatcher(matcherOf(text), bounds);
}

/** A matcher's text read (`name="value"`, `=~`, …), not compiled: what its cost is judged on. */
export function matcherOf(text: string): Matcher {
  const t = text.trim();
  const name = /^[A-Za-z_][A-Za-z0-9_]*/.exec(t)?.[0];
  if (!name) throw new MatcherError(`matcher ${JSON.stringify(text)} does not start with a label name`);
  const rest = t.slice(name.length).trimStart();
  const op = OPERATORS.find(([o]) => rest.startsWith(o));
  if (!op) throw new MatcherError(`matcher ${JSON.stringify(text)} has no operator (=, !=, =~ or !~) after ${name}`);
  const raw = rest.slice(op[0].length).trim();
  return { name, value: unquote(raw, text), ...op[1] };
}

function unquote(raw: string, text: string): string {
  if (!raw.startsWith('"')) {
    if (/["\s]/.test(raw)) throw new MatcherError(`matcher ${JSON.stringify(text)}: a value with spaces or quotes must be double-quoted`);
    return raw;
  }
  let out = '';
  for (let i = 1; i < raw.length; i++) {
    const c = raw[i]!;
    if (c === '"') {
      if (i !== raw.length - 1) throw new MatcherError(`matcher ${JSON.stringify(text)}: text after the closing quote`);
      return out;
    }
    if (c === '\\') {
      const n = raw[++i];
      if (n === 'n') out += '\n';
      else if (n === '"' || n === '\\') out += n;
      else throw new MatcherError(`matcher ${JSON.stringify(text)}: unknown escape \\${n ?? ''}`);
    } else out += c;
  }
  throw new MatcherError(`matcher ${JSON.stringify(text)}: the quoted value is not closed`);
}

/** A matcher in Alertmanager's text form (what amtool and the dashboard show). */
export function formatMatcher(m: Matcher): string {
  const op = m.isRegex ? (m.isEqual ? '=~' : '!~') : m.isEqual ? '=' : '!=';
  return `${m.name}${op}${JSON.stringify(m.value)}`;
}
