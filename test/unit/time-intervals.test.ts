import { test } from 'node:test';
import assert from 'node:assert/strict';
import { intervalContains, parseTimeInterval, TimeIntervalError, type TimeIntervalInput } from '../../src/core/time-intervals.js';

const at = (iso: string) => Date.parse(iso);
const within = (t: TimeIntervalInput, iso: string) => intervalContains(parseTimeInterval(t), at(iso));

test('times: start inclusive, end exclusive, up to 24:00, in UTC by default', () => {
  const t = { times: [{ start_time: '02:00', end_time: '04:00' }] };
  assert.equal(within(t, '2026-12-05T01:59:59Z'), false);
  assert.equal(within(t, '2026-12-05T02:00:00Z'), true);
  assert.equal(within(t, '2026-12-05T03:59:59Z'), true);
  assert.equal(within(t, '2026-12-05T04:00:00Z'), false);
  const late = { times: [{ start_time: '22:00', end_time: '24:00' }] };
  assert.equal(within(late, '2026-12-05T23:59:00Z'), true);
  assert.equal(within(late, '2026-12-06T00:00:00Z'), false);
});

test('weekdays by name and range (2026-12-05 is a Saturday)', () => {
  assert.equal(within({ weekdays: ['saturday'] }, '2026-12-05T12:00:00Z'), true);
  assert.equal(within({ weekdays: ['saturday'] }, '2026-12-06T12:00:00Z'), false);
  assert.equal(within({ weekdays: ['monday:friday'] }, '2026-12-07T00:00:00Z'), true);
  assert.equal(within({ weekdays: ['monday:friday'] }, '2026-12-06T23:59:00Z'), false);
  assert.equal(within({ weekdays: ['Sunday', 'saturday'] }, '2026-12-06T10:00:00Z'), true, 'names in any case');
});

test('days_of_month: ranges, and negative days counted from the end of that month', () => {
  assert.equal(within({ days_of_month: ['1:5'] }, '2026-12-05T23:00:00Z'), true);
  assert.equal(within({ days_of_month: ['1:5'] }, '2026-12-06T00:00:00Z'), false);
  assert.equal(within({ days_of_month: ['-1'] }, '2026-12-31T10:00:00Z'), true);
  assert.equal(within({ days_of_month: ['-1'] }, '2026-02-28T10:00:00Z'), true, 'the last day of a February');
  assert.equal(within({ days_of_month: ['-1'] }, '2028-02-28T10:00:00Z'), false, 'not in a leap year');
  assert.equal(within({ days_of_month: ['-7:-1'] }, '2026-12-25T00:00:00Z'), true);
  assert.equal(within({ days_of_month: ['-7:-1'] }, '2026-12-24T23:59:00Z'), false);
  assert.equal(within({ days_of_month: ['31'] }, '2026-11-30T10:00:00Z'), false, 'a day a month does not have matches nothing');
});

test('months by name or number, and years', () => {
  assert.equal(within({ months: ['december'] }, '2026-12-01T00:00:00Z'), true);
  assert.equal(within({ months: ['1:3'] }, '2026-03-31T23:59:00Z'), true);
  assert.equal(within({ months: ['january:march'] }, '2026-04-01T00:00:00Z'), false);
  assert.equal(within({ years: ['2026'] }, '2026-06-01T00:00:00Z'), true);
  assert.equal(within({ years: ['2027:2028'] }, '2026-12-31T23:59:00Z'), false);
  assert.equal(within({ years: ['2027:2028'] }, '2028-12-31T23:59:00Z'), true);
});

test('every field at once must match; a location moves the whole wall clock', () => {
  const t = { weekdays: ['saturday'], times: [{ start_time: '02:00', end_time: '04:00' }], months: ['december'], years: ['2026'], location: 'Europe/Berlin' };
  assert.equal(within(t, '2026-12-05T01:30:00Z'), true, '02:30 in Berlin (CET, UTC+1) on a Saturday');
  assert.equal(within(t, '2026-12-05T03:00:00Z'), false, '04:00 in Berlin');
  assert.equal(within(t, '2026-12-04T23:30:00Z'), false, 'Saturday 00:30 in Berlin, but before 02:00');
  assert.equal(within({ weekdays: ['saturday'], location: 'Europe/Berlin' }, '2026-12-04T23:30:00Z'), true, 'already Saturday in Berlin, still Friday in UTC');
});

test('Europe/Berlin across daylight saving: 02:00–04:00 lasts one hour in March and three in October', () => {
  const t = { times: [{ start_time: '02:00', end_time: '04:00' }], location: 'Europe/Berlin' };
  // 2026-03-29: at 02:00 CET the clocks jump to 03:00 CEST; 02:00–03:00 does not happen.
  assert.equal(within(t, '2026-03-29T00:59:00Z'), false, '01:59 CET');
  assert.equal(within(t, '2026-03-29T01:00:00Z'), true, '03:00 CEST');
  assert.equal(within(t, '2026-03-29T01:59:00Z'), true, '03:59 CEST');
  assert.equal(within(t, '2026-03-29T02:00:00Z'), false, '04:00 CEST');
  // 2026-10-25: at 03:00 CEST the clocks go back to 02:00 CET; 02:00–03:00 happens twice.
  assert.equal(within(t, '2026-10-24T23:59:00Z'), false, '01:59 CEST');
  assert.equal(within(t, '2026-10-25T00:00:00Z'), true, '02:00 CEST');
  assert.equal(within(t, '2026-10-25T01:30:00Z'), true, '02:30 CET, the second time');
  assert.equal(within(t, '2026-10-25T02:59:00Z'), true, '03:59 CET');
  assert.equal(within(t, '2026-10-25T03:00:00Z'), false, '04:00 CET');
});

test('what Alertmanager refuses is refused here, naming the field', () => {
  for (const [t, why] of [
    [{ times: [{ start_time: '04:00', end_time: '02:00' }] }, /times/],
    [{ times: [{ start_time: '24:00', end_time: '24:00' }] }, /start_time/],
    [{ times: [{ start_time: '2:00', end_time: '04:00' }] }, /HH:MM/],
    [{ times: [{ start_time: '02:60', end_time: '04:00' }] }, /time of day/],
    [{ weekdays: ['caturday'] }, /weekdays/],
    [{ weekdays: ['friday:monday'] }, /ends before/],
    [{ days_of_month: ['0'] }, /days_of_month/],
    [{ days_of_month: ['32'] }, /days_of_month/],
    [{ days_of_month: ['5:1'] }, /ends before/],
    [{ months: ['13'] }, /months/],
    [{ years: ['2027:2026'] }, /ends before/],
    [{ years: ['soon'] }, /years/],
    [{ weekdays: ['monday:'] }, /range/],
    [{ location: 'Mars/Olympus' }, /location/],
  ] as Array<[TimeIntervalInput, RegExp]>) {
    assert.throws(
      () => parseTimeInterval(t),
      (e: Error) => e instanceof TimeIntervalError && why.test(e.message),
      JSON.stringify(t),
    );
  }
});
