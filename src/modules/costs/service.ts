/**
 * Cost analytics (issue 36; docs/decisions.md, "Cost and usage analytics"): what a workspace's
 * credits went to, per UTC bucket, grouped by operation, key and execution origin, read from the
 * cost rollup kept in the ledger's transactions (rollup.ts), never from a scan of the ledger.
 *
 * A line's `costMillicents` is minus the sum of its ledger entries' amounts: spending (`usage`),
 * operator debits (`debit`) and expired credits (`expiration`) are positive, operator refunds
 * (`refund`) negative; purchases are not costs. The totals are the sums of the lines, so the sum
 * of every bucket equals minus the ledger's sum over the same whole buckets, to the millicent.
 */
import type { Deps } from '../../deps.js';
import { AppError } from '../../http/errors.js';
import { findWorkspace } from '../accounts/store.js';
import { toIso } from '../../lib/clock.js';
import { isLiveScope } from '../../lib/livemode.js';
import { resolveRange, type Bucket, type Range } from './range.js';
import { COST_KINDS, sumRollup, topSpenders, type CostType, type GroupField, type RollupSum } from './store.js';

export interface CostQuery {
  bucket?: Bucket;
  from?: string;
  to?: string;
  groupBy?: GroupField[];
}

export interface CostLine {
  type: CostType;
  operationId?: string | null;
  keyId?: string | null;
  executionOrigin?: string | null;
  costMillicents: number;
  entries: number;
}

export interface CostReport {
  /** Whose spending: the live workspace's (true) or its test twin's (false). */
  livemode: boolean;
  bucket: Bucket;
  from: string;
  to: string;
  groupBy: GroupField[];
  buckets: { start: string; end: string; costMillicents: number; lines: CostLine[] }[];
  totals: { costMillicents: number; byType: Record<CostType, number>; lines: CostLine[] };
}

/** groupBy as asked, each field once, in the order of GROUP_FIELDS (a repeated field counts once). */
export function normalizeGroups(groupBy: readonly GroupField[] | undefined): GroupField[] {
  const asked = new Set(groupBy ?? []);
  return (['operationId', 'keyId', 'executionOrigin'] as const).filter((g) => asked.has(g));
}

const KIND_ORDER = new Map(COST_KINDS.map((k, i) => [k, i]));

function lineKey(kind: string, groups: Partial<Record<GroupField, string>>, groupBy: readonly GroupField[]): string {
  let key = kind;
  for (const g of groupBy) key += `\u0000${groups[g] ?? ''}`;
  return key;
}

function compareLines(groupBy: readonly GroupField[]) {
  return (a: CostLine, b: CostLine) => {
    const k = KIND_ORDER.get(a.type)! - KIND_ORDER.get(b.type)!;
    if (k !== 0) return k;
    for (const g of groupBy) {
      const x = a[g] ?? '';
      const y = b[g] ?? '';
      if (x !== y) return x < y ? -1 : 1;
    }
    return 0;
  };
}

/** Sums rollup rows into lines (one per kind and grouped values), sorted by kind then values. */
function toLines(sums: readonly RollupSum[], groupBy: readonly GroupField[]): CostLine[] {
  const lines = new Map<string, CostLine>();
  for (const s of sums) {
    const key = lineKey(s.kind, s.groups, groupBy);
    let line = lines.get(key);
    if (!line) {
      line = { type: s.kind, costMillicents: 0, entries: 0 };
      for (const g of groupBy) {
        const v = s.groups[g];
        line[g] = v === '' || v === undefined ? null : v;
      }
      lines.set(key, line);
    }
    // 0 − x: no spending must read 0, not −0.
    line.costMillicents = line.costMillicents - s.amount;
    line.entries += s.entries;
  }
  return [...lines.values()].sort(compareLines(groupBy));
}

export function buildReport(range: Range, groupBy: GroupField[], sums: readonly RollupSum[], livemode = true): CostReport {
  const byBucket = new Map<number, RollupSum[]>();
  for (const s of sums) {
    const list = byBucket.get(s.bucket);
    if (list) list.push(s);
    else byBucket.set(s.bucket, [s]);
  }
  const buckets = range.starts.map((start, i) => {
    const lines = toLines(byBucket.get(start) ?? [], groupBy);
    return {
      start: toIso(start)!,
      end: toIso(range.starts[i + 1] ?? range.to)!,
      costMillicents: lines.reduce((t, l) => t + l.costMillicents, 0),
      lines,
    };
  });
  const lines = toLines(sums, groupBy);
  const byType = Object.fromEntries(COST_KINDS.map((k) => [k, 0])) as Record<CostType, number>;
  for (const l of lines) byType[l.type] += l.costMillicents;
  return {
    livemode,
    bucket: range.bucket,
    from: toIso(range.from)!,
    to: toIso(range.to)!,
    groupBy,
    buckets,
    totals: { costMillicents: lines.reduce((t, l) => t + l.costMillicents, 0), byType, lines },
  };
}

/** The range and groups a cost query asks for; 400 INVALID_REQUEST naming the field otherwise. */
export function checkCostQuery(deps: Deps, query: CostQuery): { range: Range; groupBy: GroupField[] } {
  return { range: resolveRange(query.bucket ?? 'day', query.from, query.to, deps.clock.now()), groupBy: normalizeGroups(query.groupBy) };
}

/** The cost report of one workspace. */
export async function getCosts(deps: Deps, workspaceId: string, query: CostQuery): Promise<CostReport> {
  const { range, groupBy } = checkCostQuery(deps, query);
  return buildReport(range, groupBy, await sumRollup(deps.db, workspaceId, range, groupBy), isLiveScope(workspaceId));
}

/** The operator's read of any workspace's costs: 404 NOT_FOUND for an unknown workspace. */
export async function getWorkspaceCosts(deps: Deps, workspaceId: string, query: CostQuery): Promise<CostReport> {
  if (!(await findWorkspace(deps.db, workspaceId))) throw new AppError('NOT_FOUND', { message: 'No such workspace.' });
  return getCosts(deps, workspaceId, query);
}

/** The operator's view across workspaces: spending per workspace over a range, the largest first. */
export async function getTopSpenders(deps: Deps, query: { bucket?: Bucket; from?: string; to?: string; limit?: number }) {
  const range = resolveRange(query.bucket ?? 'day', query.from, query.to, deps.clock.now());
  const items = await topSpenders(deps.db, range, query.limit ?? 25);
  return {
    from: toIso(range.from)!,
    to: toIso(range.to)!,
    items: items.map((i) => ({ workspaceId: i.workspaceId, usageMillicents: i.usage, costMillicents: i.net, usageEntries: i.entries })),
  };
}
