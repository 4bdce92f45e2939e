/**
 * UTC calendar periods (src/lib/periods.ts): every range is [start, end) of the period holding the
 * instant, in UTC (spec Budgets: daily resets at midnight, weekly starts Monday, monthly starts on
 * the first day of the month).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { periodRange, secondsUntil, type Period } from '../../src/lib/periods.js';

const utc = (iso: string) => Date.parse(iso);
const iso = (ms: number) => new Date(ms).toISOString();

function assertRange(period: Period, at: string, start: string, end: string) {
  const r = periodRange(period, utc(at));
  assert.deepEqual({ start: iso(r.start), end: iso(r.end) }, { start, end }, `${period} of ${at}`);
}

test('minute window: [hh:mm:00, next minute) with the start instant inclusive and the end exclusive', () => {
  assertRange('minute', '2026-11-18T12:34:56.789Z', '2026-11-18T12:34:00.000Z', '2026-11-18T12:35:00.000Z');
  assertRange('minute', '2026-11-18T12:34:00.000Z', '2026-11-18T12:34:00.000Z', '2026-11-18T12:35:00.000Z');
  assertRange('minute', '2026-11-18T12:34:59.999Z', '2026-11-18T12:34:00.000Z', '2026-11-18T12:35:00.000Z');
  assertRange('minute', '2026-12-31T23:59:30.000Z', '2026-12-31T23:59:00.000Z', '2027-01-01T00:00:00.000Z');
});

test('day period: UTC midnight to next UTC midnight, including the year end and a leap day', () => {
  assertRange('day', '2026-11-18T12:00:00.000Z', '2026-11-18T00:00:00.000Z', '2026-11-19T00:00:00.000Z');
  assertRange('day', '2026-11-18T00:00:00.000Z', '2026-11-18T00:00:00.000Z', '2026-11-19T00:00:00.000Z');
  assertRange('day', '2026-11-18T23:59:59.999Z', '2026-11-18T00:00:00.000Z', '2026-11-19T00:00:00.000Z');
  assertRange('day', '2026-12-31T23:59:59.999Z', '2026-12-31T00:00:00.000Z', '2027-01-01T00:00:00.000Z');
  assertRange('day', '2028-02-29T10:00:00.000Z', '2028-02-29T00:00:00.000Z', '2028-03-01T00:00:00.000Z');
  assertRange('day', '2028-02-28T23:59:59.999Z', '2028-02-28T00:00:00.000Z', '2028-02-29T00:00:00.000Z');
});

test('ISO week: starts Monday 00:00Z; a Sunday belongs to the week of the Monday before it', () => {
  // 2026-11-18 is a Wednesday.
  assertRange('week', '2026-11-18T12:00:00.000Z', '2026-11-16T00:00:00.000Z', '2026-11-23T00:00:00.000Z');
  // Sunday, last millisecond of the week.
  assertRange('week', '2026-11-22T23:59:59.999Z', '2026-11-16T00:00:00.000Z', '2026-11-23T00:00:00.000Z');
  // Monday, first instant of the next week.
  assertRange('week', '2026-11-23T00:00:00.000Z', '2026-11-23T00:00:00.000Z', '2026-11-30T00:00:00.000Z');
  // Across the year end: 2026-12-31 is a Thursday; its week runs Mon 2026-12-28 .. Mon 2027-01-04.
  assertRange('week', '2026-12-31T12:00:00.000Z', '2026-12-28T00:00:00.000Z', '2027-01-04T00:00:00.000Z');
  assertRange('week', '2027-01-03T23:00:00.000Z', '2026-12-28T00:00:00.000Z', '2027-01-04T00:00:00.000Z');
  // Across a leap day: 2028-02-29 is a Tuesday.
  assertRange('week', '2028-02-29T08:00:00.000Z', '2028-02-28T00:00:00.000Z', '2028-03-06T00:00:00.000Z');
  // A week that starts on a Sunday-evening instant in UTC+ time zones is still UTC: Sunday 23:30Z is last week.
  assertRange('week', '2026-11-15T23:30:00.000Z', '2026-11-09T00:00:00.000Z', '2026-11-16T00:00:00.000Z');
});

test('month period: first of the month 00:00Z to first of next month, incl. December, February of leap and common years', () => {
  assertRange('month', '2026-11-18T12:00:00.000Z', '2026-11-01T00:00:00.000Z', '2026-12-01T00:00:00.000Z');
  assertRange('month', '2026-11-01T00:00:00.000Z', '2026-11-01T00:00:00.000Z', '2026-12-01T00:00:00.000Z');
  assertRange('month', '2026-11-30T23:59:59.999Z', '2026-11-01T00:00:00.000Z', '2026-12-01T00:00:00.000Z');
  assertRange('month', '2026-12-31T23:59:59.999Z', '2026-12-01T00:00:00.000Z', '2027-01-01T00:00:00.000Z');
  assertRange('month', '2028-02-29T23:59:59.999Z', '2028-02-01T00:00:00.000Z', '2028-03-01T00:00:00.000Z');
  assertRange('month', '2027-02-15T00:00:00.000Z', '2027-02-01T00:00:00.000Z', '2027-03-01T00:00:00.000Z');
});

test('periods: every instant lies in [start, end), the range is aligned, and end starts the next period (property)', () => {
  const instant = fc.integer({ min: Date.UTC(1971, 0, 1), max: Date.UTC(2200, 0, 1) });
  fc.assert(
    fc.property(instant, fc.constantFrom<Period>('minute', 'day', 'week', 'month'), (ms, period) => {
      const r = periodRange(period, ms);
      assert.ok(r.start <= ms && ms < r.end);
      assert.deepEqual(periodRange(period, r.start), r, 'the start instant belongs to its own period');
      assert.equal(periodRange(period, r.end).start, r.end, 'the end instant starts the next period');
      assert.equal(periodRange(period, r.end - 1).start, r.start, 'the last millisecond is still this period');
      const d = new Date(r.start);
      assert.equal(d.getUTCSeconds() + d.getUTCMilliseconds(), 0, 'starts on a whole minute');
      if (period !== 'minute') assert.equal(d.getUTCHours() + d.getUTCMinutes(), 0, 'starts at midnight UTC');
      if (period === 'week') assert.equal(d.getUTCDay(), 1, 'weeks start on Monday');
      if (period === 'month') assert.equal(d.getUTCDate(), 1, 'months start on the first');
    }),
    { numRuns: 2000 },
  );
});

test('secondsUntil (Retry-After): whole seconds rounded up, at least 1', () => {
  const now = utc('2026-11-18T12:34:56.200Z');
  assert.equal(secondsUntil(now, utc('2026-11-18T12:35:00.000Z')), 4);
  assert.equal(secondsUntil(now, now + 1000), 1);
  assert.equal(secondsUntil(now, now + 1001), 2);
  assert.equal(secondsUntil(now, now), 1);
  assert.equal(secondsUntil(now, now - 5000), 1);
  assert.equal(secondsUntil(utc('2026-11-18T12:34:00.000Z'), utc('2026-11-18T12:35:00.000Z')), 60);
});
