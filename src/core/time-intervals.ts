/**
 * Alertmanager's `time_intervals`, parsed as Alertmanager parses them and
 * evaluated in the interval's `location` (an IANA time zone, UTC by default):
 *
 *   times:          [{start_time: 'HH:MM', end_time: 'HH:MM'}]  start inclusive, end exclusive, end up to 24:00
 *   weekdays:       ['monday', 'monday:friday']
 *   days_of_month:  ['1', '1:5', '-1', '-7:-1']             negative counts from the month's end
 *   months:         ['january', 'january:march', '1', '1:3']
 *   years:          ['2026', '2026:2027']
 *
 * An interval matches when every field it has matches (a field left out
 * matches always); a list of intervals matches when one of them does.
 */

export interface TimeIntervalInput {
  times?: Array<{ start_time: string; end_time: string }>;
  weekdays?: string[];
  days_of_month?: string[];
  months?: string[];
  years?: string[];
  location?: string;
}

type Range = [number, number];

export interface TimeInterval {
  times: Range[] | null;
  weekdays: Range[] | null;
  daysOfMonth: Range[] | null;
  months: Range[] | null;
  years: Range[] | null;
  location: string;
}

export class TimeIntervalError extends Error {
  readonly code = 'time_interval_invalid';
}

const WEEKDAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];
const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];

function ranges(items: string[] | undefined, what: string, one: (s: string) => number, check: (a: number, b: number) => void): Range[] | null {
  if (items === undefined) return null;
  return items.map((item) => {
    const parts = item.toLowerCase().trim().split(':');
    if (parts.length > 2 || parts.some((p) => p === '')) throw new TimeIntervalError(`${what}: ${JSON.stringify(item)} is not a value or a range "a:b"`);
    const a = one(parts[0]!);
    const b = parts.length === 2 ? one(parts[1]!) : a;
    check(a, b);
    return [a, b];
  });
}

const integer = (s: string, what: string) => {
  if (!/^-?\d+$/.test(s)) throw new TimeIntervalError(`${what}: ${JSON.stringify(s)} is not a number`);
  return Number(s);
};

const named = (names: string[], what: string, numbered: boolean) => (s: string) => {
  const i = names.indexOf(s);
  if (i >= 0) return numbered ? i + 1 : i;
  if (numbered && /^\d+$/.test(s) && Number(s) >= 1 && Number(s) <= names.length) return Number(s);
  throw new TimeIntervalError(`${what}: ${JSON.stringify(s)} is not one of ${names.join(', ')}`);
};

const ascending = (what: string) => (a: number, b: number) => {
  if (a > b) throw new TimeIntervalError(`${what}: the range ${a}:${b} ends before it starts`);
};

function minutes(t: string, what: string, end: boolean): number {
  const m = /^(\d{2}):(\d{2})$/.exec(t);
  if (!m) throw new TimeIntervalError(`${what}: ${JSON.stringify(t)} is not HH:MM`);
  const v = Number(m[1]) * 60 + Number(m[2]);
  if (Number(m[2]) > 59 || v > 24 * 60 || (!end && v === 24 * 60)) throw new TimeIntervalError(`${what}: ${t} is not a time of day`);
  return v;
}

/** Throws TimeIntervalError, naming the field, on anything Alertmanager would refuse. */
export function parseTimeInterval(t: TimeIntervalInput): TimeInterval {
  const location = t.location ?? 'UTC';
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: location });
  } catch {
    throw new TimeIntervalError(`location: ${JSON.stringify(location)} is not a time zone (an IANA name such as Europe/Berlin)`);
  }
  return {
    times:
      t.times?.map(({ start_time, end_time }) => {
        const a = minutes(start_time, 'times.start_time', false);
        const b = minutes(end_time, 'times.end_time', true);
        if (b <= a) throw new TimeIntervalError(`times: ${start_time}–${end_time} ends before it starts`);
        return [a, b] as Range;
      }) ?? null,
    weekdays: ranges(t.weekdays, 'weekdays', named(WEEKDAYS, 'weekdays', false), ascending('weekdays')),
    daysOfMonth: ranges(
      t.days_of_month,
      'days_of_month',
      (s) => integer(s, 'days_of_month'),
      (a, b) => {
        for (const d of [a, b]) if (d === 0 || d < -31 || d > 31) throw new TimeIntervalError(`days_of_month: ${d} is not a day (1..31 or -31..-1)`);
        if (Math.sign(a) === Math.sign(b) && a > b) throw new TimeIntervalError(`days_of_month: the range ${a}:${b} ends before it starts`);
      },
    ),
    months: ranges(t.months, 'months', named(MONTHS, 'months', true), ascending('months')),
    years: ranges(
      t.years,
      'years',
      (s) => integer(s, 'years'),
      (a, b) => {
        if (a < 1 || b < 1) throw new TimeIntervalError(`years: ${a} is not a year`);
        ascending('years')(a, b);
      },
    ),
    location,
  };
}

const formatters = new Map<string, Intl.DateTimeFormat>();

/** The wall clock in a time zone: year, month (1–12), day, weekday (0 = Sunday), minute of the day. */
function wallClock(ms: number, zone: string) {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      weekday: 'long',
      hour: 'numeric',
      minute: 'numeric',
      hourCycle: 'h23',
    });
    formatters.set(zone, f);
  }
  const p: Record<string, string> = {};
  for (const part of f.formatToParts(ms)) p[part.type] = part.value;
  return {
    year: Number(p.year),
    month: Number(p.month),
    day: Number(p.day),
    weekday: WEEKDAYS.indexOf(p.weekday!.toLowerCase()),
    minute: Number(p.hour) * 60 + Number(p.minute),
  };
}

const inAny = (rs: Range[] | null, v: number) => rs === null || rs.some(([a, b]) => v >= a && v <= b);

export function intervalContains(t: TimeInterval, ms: number): boolean {
  const w = wallClock(ms, t.location);
  if (t.times && !t.times.some(([a, b]) => w.minute >= a && w.minute < b)) return false;
  if (!inAny(t.weekdays, w.weekday) || !inAny(t.months, w.month) || !inAny(t.years, w.year)) return false;
  if (t.daysOfMonth) {
    const daysInMonth = new Date(Date.UTC(w.year, w.month, 0)).getUTCDate();
    // Negative days count from the end (-1 is the last day); a day past the month's end matches nothing.
    const abs = (d: number) => (d < 0 ? daysInMonth + 1 + d : d);
    if (!t.daysOfMonth.some(([a, b]) => w.day >= Math.max(1, abs(a)) && w.day <= Math.min(daysInMonth, abs(b)))) return false;
  }
  return true;
}
