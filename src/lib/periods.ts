/**
 * UTC calendar periods used by usage windows and budgets: minute, day, ISO week (from Monday),
 * calendar month. Each function returns [startMs, endMs) of the period containing `ms`.
 */
export type Period = 'minute' | 'day' | 'week' | 'month';

export interface PeriodRange {
  start: number;
  end: number;
}

const MINUTE = 60_000;
const DAY = 86_400_000;

export function periodRange(period: Period, ms: number): PeriodRange {
  switch (period) {
    case 'minute': {
      const start = ms - (((ms % MINUTE) + MINUTE) % MINUTE);
      return { start, end: start + MINUTE };
    }
    case 'day': {
      const start = ms - (((ms % DAY) + DAY) % DAY);
      return { start, end: start + DAY };
    }
    case 'week': {
      const dayStart = periodRange('day', ms).start;
      // getUTCDay: 0 = Sunday … 6 = Saturday; ISO weeks start on Monday.
      const weekday = (new Date(dayStart).getUTCDay() + 6) % 7;
      const start = dayStart - weekday * DAY;
      return { start, end: start + 7 * DAY };
    }
    case 'month': {
      const d = new Date(ms);
      const start = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
      const end = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
      return { start, end };
    }
  }
}

/** Whole seconds until `targetMs`, at least 1 (for Retry-After). */
export function secondsUntil(nowMs: number, targetMs: number): number {
  return Math.max(1, Math.ceil((targetMs - nowMs) / 1000));
}
