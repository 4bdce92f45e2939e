/**
 * GET /v1/usage/history (issue 36): usage points per UTC minute (the last 24 hours), hour (the
 * last 62 days) or day, grouped by key and/or operation, with the 429 refusals by their
 * `details.limit` in the same buckets. Read from `usage_history` (history.ts) after this process's
 * own counts are flushed; other processes' last flush interval may still be on its way.
 */
import { sql } from 'kysely';
import type { Deps } from '../../deps.js';
import { toIso } from '../../lib/clock.js';
import { isLiveScope } from '../../lib/livemode.js';
import { invalidField, resolveRange, type Range } from '../costs/range.js';
import { HISTORY_RETENTION_MS } from './history.js';

export type HistoryBucket = 'minute' | 'hour' | 'day';
export type HistoryGroup = 'keyId' | 'operation';
export const HISTORY_GROUPS: HistoryGroup[] = ['keyId', 'operation'];
const COLUMN: Record<HistoryGroup, string> = { keyId: 'key_id', operation: 'operation' };

export interface HistoryQuery {
  bucket?: HistoryBucket;
  from?: string;
  to?: string;
  groupBy?: HistoryGroup[];
}

export interface HistoryLine {
  keyId?: string;
  operation?: string;
  points: number;
  /** 429s answered, by their details.limit. */
  refused: Record<string, number>;
}

interface Figure {
  points: number;
  refused: Record<string, number>;
}

function addTo(f: Figure, kind: string, count: number): void {
  if (kind === 'points') f.points += count;
  else if (kind.startsWith('429:')) {
    const limit = kind.slice(4);
    f.refused[limit] = (f.refused[limit] ?? 0) + count;
  }
}

/** The range of a history read: minutes reach back 24 hours, hours 62 days (what is kept). */
export function historyRange(bucket: HistoryBucket, from: string | undefined, to: string | undefined, now: number): Range {
  const range = resolveRange(bucket, from, to, now);
  if (bucket === 'minute' && range.from < now - 24 * 3_600_000 - 60_000) throw invalidField('from', 'minute buckets cover the last 24 hours only');
  if (bucket === 'hour' && range.from < now - HISTORY_RETENTION_MS.hour + 3_600_000) throw invalidField('from', 'hour buckets cover the last 61 days only');
  return range;
}

/** The range a history query asks for; 400 INVALID_REQUEST naming the field otherwise. */
export function checkHistoryQuery(deps: Deps, query: HistoryQuery): Range {
  return historyRange(query.bucket ?? 'hour', query.from, query.to, deps.clock.now());
}

export async function getUsageHistory(deps: Deps, workspaceId: string, query: HistoryQuery, scope: { workspaceId: string | null } = { workspaceId }) {
  const bucket = query.bucket ?? 'hour';
  const range = checkHistoryQuery(deps, query);
  const asked = new Set(query.groupBy ?? []);
  const groupBy = HISTORY_GROUPS.filter((g) => asked.has(g));
  // What this process counted reaches the table first.
  await deps.usage.flush();
  const cols = groupBy.map((g) => sql`${sql.ref(COLUMN[g])} as ${sql.ref(g)}`);
  const where = scope.workspaceId === null ? sql`` : sql`workspace_id = ${scope.workspaceId} and `;
  const { rows } = await sql<Record<string, unknown>>`
    select bucket_ms, kind, ${sql.join([...cols, sql`sum(count) as n`])}
    from usage_history
    where ${where}span = ${bucket} and bucket_ms >= ${range.from} and bucket_ms < ${range.to}
    group by ${sql.join([sql`bucket_ms`, sql`kind`, ...groupBy.map((g) => sql.ref(COLUMN[g]))])}`.execute(deps.db);

  const lineOf = (map: Map<string, HistoryLine>, r: Record<string, unknown>) => {
    const k = JSON.stringify(groupBy.map((g) => r[g]));
    let line = map.get(k);
    if (!line) {
      line = { ...Object.fromEntries(groupBy.map((g) => [g, String(r[g])])), points: 0, refused: {} };
      map.set(k, line);
    }
    return line;
  };
  const perBucket = new Map<number, Map<string, HistoryLine>>();
  const totals = new Map<string, HistoryLine>();
  for (const r of rows) {
    const b = Number(r.bucket_ms);
    let lines = perBucket.get(b);
    if (!lines) perBucket.set(b, (lines = new Map()));
    addTo(lineOf(lines, r), String(r.kind), Number(r.n));
    addTo(lineOf(totals, r), String(r.kind), Number(r.n));
  }
  const sortLines = (m: Map<string, HistoryLine> | undefined) =>
    [...(m?.values() ?? [])].filter((l) => l.points !== 0 || Object.keys(l.refused).length > 0).sort((a, b) => {
      for (const g of groupBy) if (a[g] !== b[g]) return a[g]! < b[g]! ? -1 : 1;
      return 0;
    });
  const sum = (lines: HistoryLine[]): Figure => {
    const f: Figure = { points: 0, refused: {} };
    for (const l of lines) {
      f.points += l.points;
      for (const [k, v] of Object.entries(l.refused)) f.refused[k] = (f.refused[k] ?? 0) + v;
    }
    return f;
  };
  const buckets = range.starts.map((start, i) => {
    const lines = sortLines(perBucket.get(start));
    return { start: toIso(start), end: toIso(range.starts[i + 1] ?? range.to), ...sum(lines), lines };
  });
  const totalLines = sortLines(totals);
  const livemode = scope.workspaceId === null || isLiveScope(scope.workspaceId);
  return { livemode, bucket, from: toIso(range.from), to: toIso(range.to), groupBy, buckets, totals: { ...sum(totalLines), lines: totalLines } };
}
