/**
 * The oracle of the cost reads (issue 36): what GET /v1/costs must answer, computed straight from
 * the ledger rows (credit_transactions), and the check that the cost rollup (migration 0015) holds
 * exactly the ledger summed per hour and per day.
 */
import assert from 'node:assert/strict';
import type { Deps } from '../../src/deps.js';

const HOUR = 3_600_000;
const DAY = 86_400_000;
const KIND_ORDER = ['usage', 'refund', 'debit', 'expiration'];

export interface LedgerRow {
  workspaceId: string;
  type: string;
  amount: number;
  operationId: string | null;
  keyId: string | null;
  executionOrigin: string | null;
  createdAt: number;
}

export async function ledgerRows(deps: Deps, workspaceId?: string): Promise<LedgerRow[]> {
  let q = deps.db.selectFrom('credit_transactions').select(['workspace_id', 'type', 'amount_mc', 'operation_id', 'key_id', 'execution_origin', 'created_at_ms']);
  if (workspaceId) q = q.where('workspace_id', '=', workspaceId);
  return (await q.execute()).map((r) => ({
    workspaceId: r.workspace_id,
    type: r.type,
    amount: Number(r.amount_mc),
    operationId: r.operation_id,
    keyId: r.key_id,
    executionOrigin: r.execution_origin,
    createdAt: Number(r.created_at_ms),
  }));
}

export function kindOf(r: Pick<LedgerRow, 'type' | 'amount'>): string {
  return r.type === 'adjustment' ? (r.amount > 0 ? 'refund' : 'debit') : r.type;
}

/** Start of the UTC bucket holding `ms`. */
export function bucketStart(bucket: 'hour' | 'day' | 'month', ms: number): number {
  if (bucket === 'hour') return ms - (ms % HOUR);
  if (bucket === 'day') return ms - (ms % DAY);
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
}

export type Group = 'operationId' | 'keyId' | 'executionOrigin';

/** The lines the ledger gives for [from, to): cost = −Σ amount per kind and grouped values, purchases left out. */
export function expectedLines(rows: readonly LedgerRow[], from: number, to: number, groupBy: readonly Group[], bucket?: 'hour' | 'day' | 'month') {
  const lines = new Map<string, Record<string, unknown>>();
  for (const r of rows) {
    if (r.type === 'purchase' || r.createdAt < from || r.createdAt >= to) continue;
    const kind = kindOf(r);
    const b = bucket ? new Date(bucketStart(bucket, r.createdAt)).toISOString() : '';
    const key = JSON.stringify([b, kind, ...groupBy.map((g) => r[g])]);
    let line = lines.get(key);
    if (!line) {
      line = { ...(bucket ? { bucketStart: b } : {}), type: kind, ...Object.fromEntries(groupBy.map((g) => [g, r[g]])), costMillicents: 0, entries: 0 };
      lines.set(key, line);
    }
    line.costMillicents = (line.costMillicents as number) - r.amount;
    (line.entries as number)++;
  }
  return [...lines.values()].sort((a, b) => {
    if (a.bucketStart !== b.bucketStart) return String(a.bucketStart) < String(b.bucketStart) ? -1 : 1;
    const k = KIND_ORDER.indexOf(a.type as string) - KIND_ORDER.indexOf(b.type as string);
    if (k !== 0) return k;
    for (const g of groupBy) {
      const x = (a[g] as string | null) ?? '';
      const y = (b[g] as string | null) ?? '';
      if (x !== y) return x < y ? -1 : 1;
    }
    return 0;
  });
}

/**
 * The rollup holds, for every workspace, span, bucket, kind and attribution, exactly the sum and
 * count of the ledger entries it covers: no row missing, none extra, none off by a millicent.
 */
export async function assertRollupMatchesLedger(deps: Deps, workspaceId?: string): Promise<void> {
  const rows = await ledgerRows(deps, workspaceId);
  const expected = new Map<string, { amount: number; entries: number }>();
  for (const r of rows) {
    for (const [span, unit] of [['hour', HOUR], ['day', DAY]] as const) {
      const key = JSON.stringify([r.workspaceId, span, r.createdAt - (r.createdAt % unit), kindOf(r), r.operationId ?? '', r.keyId ?? '', r.executionOrigin ?? '']);
      const e = expected.get(key) ?? { amount: 0, entries: 0 };
      e.amount += r.amount;
      e.entries += 1;
      expected.set(key, e);
    }
  }
  let q = deps.db.selectFrom('cost_rollups').selectAll();
  if (workspaceId) q = q.where('workspace_id', '=', workspaceId);
  const actual = new Map(
    (await q.execute()).map((r) => [
      JSON.stringify([r.workspace_id, r.span, Number(r.bucket_ms), r.kind, r.operation_id, r.key_id, r.execution_origin]),
      { amount: Number(r.amount_mc), entries: Number(r.entries) },
    ]),
  );
  assert.deepEqual(
    [...actual].sort(([a], [b]) => (a < b ? -1 : 1)),
    [...expected].sort(([a], [b]) => (a < b ? -1 : 1)),
    'the cost rollup equals the ledger summed per hour and per day',
  );
}

/** Parses RFC 4180 CSV (quoted fields, doubled quotes, CRLF) into rows of fields. */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\r' && text[i + 1] === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      i++;
    } else field += c;
  }
  assert.equal(quoted, false, 'CSV ends outside a quoted field');
  assert.equal(field === '' && row.length === 0, true, 'CSV ends with CRLF');
  return rows;
}
