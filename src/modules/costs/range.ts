/**
 * The time range and buckets of a cost or usage read (docs/decisions.md, "Cost and usage
 * analytics"): UTC buckets of an hour, a day or a calendar month; `from` is moved back to the
 * start of its bucket and `to` forward to the end of its bucket, so every bucket is whole; a
 * range holds at most MAX_BUCKETS of its buckets. A bad value is 400 INVALID_REQUEST naming the
 * field (details.errors[].pointer, as a schema refusal does).
 */
import { AppError } from '../../http/errors.js';
import { DAY_MS, floorTo, HOUR_MS } from './rollup.js';

export type Bucket = 'minute' | 'hour' | 'day' | 'month';

const MINUTE_MS = 60_000;

/** The most buckets one read may cover: a day of minutes, 31 days of hours, a year and a day of days, three years of months. */
export const MAX_BUCKETS: Record<Bucket, number> = { minute: 1440, hour: 744, day: 366, month: 36 };
/** Buckets covered when `from` is not given: the last hour of minutes, day of hours, 31 days, 12 months. */
export const DEFAULT_BUCKETS: Record<Bucket, number> = { minute: 60, hour: 24, day: 31, month: 12 };

export interface Range {
  bucket: Bucket;
  from: number;
  to: number;
  /** The bucket starts, oldest first; `to` ends the last. */
  starts: number[];
}

export function invalidField(field: string, message: string): AppError {
  return new AppError('INVALID_REQUEST', {
    message: `Invalid querystring: /${field} ${message}`,
    details: { errors: [{ in: 'querystring', pointer: `/${field}`, message }] },
  });
}

// RFC 3339 date-time (seconds, optional fraction, Z or ±hh:mm) or a full date (midnight UTC).
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2}))?$/;
const MIN_TIME = Date.UTC(2000, 0, 1);
const MAX_TIME = Date.UTC(9000, 0, 1);

/** Parses a `from`/`to` value: an RFC 3339 date-time or a YYYY-MM-DD date (UTC midnight). */
export function parseTime(field: string, value: string): number {
  const m = DATE_TIME.exec(value);
  const bad = () => invalidField(field, 'must be an RFC 3339 date-time (2026-11-01T00:00:00Z) or a date (2026-11-01)');
  if (!m) throw bad();
  const [, y, mo, d, h, mi, s] = m;
  if (Number(mo) < 1 || Number(mo) > 12 || Number(d) < 1 || Number(d) > 31) throw bad();
  if (h !== undefined && (Number(h) > 23 || Number(mi) > 59 || Number(s) > 59)) throw bad();
  const offset = m[7];
  if (offset && offset.length === 6 && (Number(offset.slice(1, 3)) > 23 || Number(offset.slice(4, 6)) > 59)) throw bad();
  // Date.UTC rolls an impossible day (02-30) over: refuse it instead.
  if (new Date(Date.UTC(Number(y), Number(mo) - 1, Number(d))).getUTCDate() !== Number(d)) throw bad();
  const ms = h === undefined ? Date.UTC(Number(y), Number(mo) - 1, Number(d)) : Date.parse(value.toUpperCase().replace(' ', 'T'));
  if (!Number.isFinite(ms)) throw bad();
  if (ms < MIN_TIME || ms > MAX_TIME) throw invalidField(field, 'must be between 2000-01-01 and 9000-01-01');
  return ms;
}

export function floorBucket(bucket: Bucket, ms: number): number {
  if (bucket === 'minute') return floorTo(ms, MINUTE_MS);
  if (bucket === 'hour') return floorTo(ms, HOUR_MS);
  if (bucket === 'day') return floorTo(ms, DAY_MS);
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
}

export function nextBucket(bucket: Bucket, start: number): number {
  if (bucket === 'minute') return start + MINUTE_MS;
  if (bucket === 'hour') return start + HOUR_MS;
  if (bucket === 'day') return start + DAY_MS;
  const d = new Date(start);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
}

function ceilBucket(bucket: Bucket, ms: number): number {
  const floor = floorBucket(bucket, ms);
  return floor === ms ? ms : nextBucket(bucket, floor);
}

/**
 * The range of a read: `from`/`to` as given (either may be absent), rounded out to whole buckets.
 * Without `to` the range ends with the bucket holding `now`; without `from` it starts
 * DEFAULT_BUCKETS before `to`.
 */
export function resolveRange(bucket: Bucket, fromText: string | undefined, toText: string | undefined, now: number, maxBuckets = MAX_BUCKETS[bucket]): Range {
  const fromMs = fromText === undefined ? undefined : parseTime('from', fromText);
  const toMs = toText === undefined ? undefined : parseTime('to', toText);
  if (fromMs !== undefined && toMs !== undefined && toMs <= fromMs) throw invalidField('to', 'must be later than from');
  const to = toMs !== undefined ? ceilBucket(bucket, toMs) : nextBucket(bucket, floorBucket(bucket, now));
  let from: number;
  if (fromMs !== undefined) from = floorBucket(bucket, fromMs);
  else {
    from = to;
    for (let i = 0; i < Math.min(DEFAULT_BUCKETS[bucket], maxBuckets); i++) from = floorBucket(bucket, from - 1);
  }
  if (fromMs !== undefined && toMs === undefined && to <= from) throw invalidField('from', 'must be earlier than the end of the current bucket when to is not given');
  const starts: number[] = [];
  for (let s = from; s < to; s = nextBucket(bucket, s)) {
    starts.push(s);
    if (starts.length > maxBuckets) {
      throw invalidField(fromMs !== undefined && toMs === undefined ? 'from' : 'to', `the range from ${new Date(from).toISOString()} holds more than ${maxBuckets} ${bucket} buckets (at most ${maxBuckets})`);
    }
  }
  return { bucket, from, to, starts };
}
