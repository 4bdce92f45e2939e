/**
 * (y) Cost analytics at scale (issue 36): a month of 1,000,000 ledger entries of one workspace
 * (20 operations, 10 keys, 2 execution origins; usage with some expirations, refunds, debits and
 * purchases), plus 9 smaller workspaces beside it, on SQLite and on a fresh PostgreSQL database.
 * The cost rollup is built from the ledger with the SQL of migration 0015 and checked against it;
 * then GET /v1/costs's read (the service's own sumRollup + buildReport) of the 31 days of October
 * 2026 by day, grouped by operationId, keyId and executionOrigin, is timed: goal median <= 50 ms.
 * Beside it, the same range grouped by operationId alone (summed in the query), the range's total
 * computed by scanning the ledger (a plain sum, far less than a grouped report: what the rollup
 * saves), and a check that the report and the ledger agree to the millicent.
 *
 *   node --import tsx bench/costs.ts            # or BENCH_ONLY=y npm run bench
 *   BENCH_COSTS_ROWS=200000 …                    # a smaller data set
 *   BENCH_PG_URL=postgres://…                    # the PostgreSQL server (default the local one; unreachable: skipped)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql, type Kysely } from 'kysely';
import { migrateToLatest, openDatabase } from '../src/db/connect.js';
import type { Database } from '../src/db/schema.js';
import { resolveRange } from '../src/modules/costs/range.js';
import { buildReport } from '../src/modules/costs/service.js';
import { sumRollup } from '../src/modules/costs/store.js';
import { withFreshDatabase } from './jobs-pg.js';

const ROWS = Number(process.env.BENCH_COSTS_ROWS ?? 1_000_000);
const RUNS = Number(process.env.BENCH_COSTS_RUNS ?? 15);
const PG_URL = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const GOAL_MS = 50;
const MONTH_START = Date.UTC(2026, 9, 1);
const MONTH_MS = 31 * 86_400_000;
const WORKSPACE = '00000000-0000-7000-8000-00000000b001';

export interface CostBenchCase {
  database: 'sqlite' | 'postgres';
  rows: number;
  rollupRows: number;
  seedS: number;
  medianMs: number;
  p95Ms: number;
  /** CPU time of this process per read, median (on SQLite all of the read's work; steadier than wall time on a busy machine). */
  cpuMs: number;
  ledgerScanMs: number;
  /** The same range by day grouped by operationId alone (rows summed in the query), median ms: for information. */
  oneGroupMs: number;
  exact: boolean;
  verdict: 'ok' | 'MISS' | 'FAIL';
}

const log = (s: string) => process.stdout.write(`${s}\n`);

/** The ledger rows of one workspace, generated in the database (deterministic, spread over the month). */
async function seed(db: Kysely<Database>, dialect: 'sqlite' | 'postgres', workspaceId: string, rows: number, prefix: string): Promise<void> {
  // Row i: at MONTH_START + i * (MONTH_MS / rows); kind by i mod 100: 0 expiration, 1 refund, 2 debit, 3 purchase, else usage.
  const series = dialect === 'sqlite'
    ? sql`with recursive n(i) as (select 0 union all select i + 1 from n where i < ${sql.lit(rows - 1)}) select i from n`
    : sql`select generate_series(0, ${sql.lit(rows - 1)})::bigint as i`;
  const step = Math.floor(MONTH_MS / rows);
  // h: a well-mixed hash of i (Knuth's multiplicative), so operation, key and origin vary independently.
  await sql`insert into credit_transactions (id, workspace_id, type, amount_mc, allocation_id, key_id, tool_slug, job_id, execution_origin, created_at_ms, operation_id)
    select ${prefix} || i, ${workspaceId},
      case i % 100 when 0 then 'expiration' when 1 then 'adjustment' when 2 then 'adjustment' when 3 then 'purchase' else 'usage' end,
      case i % 100 when 0 then -(h % 3000 + 1) when 1 then h % 2000 + 1 when 2 then -(h % 2000 + 1) when 3 then 1000000 else -(h % 5000 + 1) end,
      null,
      case when i % 100 < 4 then null else 'key-' || ((h / 20) % 10) end,
      case when i % 100 < 4 then null else 'tool-' || (h % 20) end,
      null,
      case when i % 100 < 4 then null when (h / 200) % 2 = 0 then 'mcp' else 'api' end,
      ${sql.lit(MONTH_START)} + i * ${sql.lit(step)},
      case when i % 100 < 4 then null else 'op-' || (h % 20) end
    from (select i, (i * 2654435761) % 4294967296 as h from (${series}) s0) s`.execute(db);
}

/** The rollup of every ledger entry, by the SQL of migration 0015 (the write path keeps it so entry by entry). */
async function buildRollup(db: Kysely<Database>): Promise<void> {
  for (const [span, ms] of [['hour', 3_600_000], ['day', 86_400_000]] as const) {
    await sql`insert into cost_rollups (workspace_id, span, bucket_ms, kind, operation_id, key_id, execution_origin, amount_mc, entries)
      select workspace_id, ${sql.lit(span)}, b, k, o, kk, e, sum(amount_mc), count(*) from (
        select workspace_id, created_at_ms - (created_at_ms % ${sql.lit(ms)}) as b,
          case when type = 'adjustment' and amount_mc > 0 then 'refund' when type = 'adjustment' then 'debit' else type end as k,
          coalesce(operation_id, '') as o, coalesce(key_id, '') as kk, coalesce(execution_origin, '') as e, amount_mc
        from credit_transactions) t
      group by workspace_id, b, k, o, kk, e`.execute(db);
  }
  await sql`analyze`.execute(db);
}

async function measure(url: string, database: 'sqlite' | 'postgres'): Promise<CostBenchCase> {
  const handle = await openDatabase(url);
  try {
    const db = handle.db;
    await migrateToLatest(db);
    const t0 = performance.now();
    await db.insertInto('users').values({ id: 'bench-user', email: 'bench@example.com', name: 'bench', created_at_ms: 0 }).execute();
    const others = Array.from({ length: 9 }, (_, i) => `00000000-0000-7000-8000-00000000b1${String(i).padStart(2, '0')}`);
    for (const id of [WORKSPACE, ...others]) {
      await db.insertInto('workspaces').values({ id, name: 'bench', plan: 'pro' as const, owner_user_id: 'bench-user', limits_json: '{}', created_at_ms: 0, updated_at_ms: 0 }).execute();
    }
    await seed(db, database, WORKSPACE, ROWS, 'w-');
    for (const [i, id] of others.entries()) await seed(db, database, id, Math.max(1000, Math.floor(ROWS / 100)), `o${i}-`);
    await buildRollup(db);
    const seedS = (performance.now() - t0) / 1000;
    const rollupRows = Number((await sql<{ n: number }>`select count(*) as n from cost_rollups where workspace_id = ${WORKSPACE}`.execute(db)).rows[0]!.n);

    const range = resolveRange('day', '2026-10-01', '2026-11-01', MONTH_START + MONTH_MS);
    const groupBy = ['operationId', 'keyId', 'executionOrigin'] as const;
    const read = async () => buildReport(range, [...groupBy], await sumRollup(db, WORKSPACE, range, groupBy));
    for (let i = 0; i < 3; i++) await read();
    const times: number[] = [];
    const cpu: number[] = [];
    let report = await read();
    for (let i = 0; i < RUNS; i++) {
      const s = performance.now();
      const c0 = process.cpuUsage();
      report = await read();
      const c = process.cpuUsage(c0);
      times.push(performance.now() - s);
      cpu.push((c.user + c.system) / 1000);
    }
    cpu.sort((a, b) => a - b);
    times.sort((a, b) => a - b);
    const oneGroup: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const t1 = performance.now();
      buildReport(range, ['operationId'], await sumRollup(db, WORKSPACE, range, ['operationId']));
      oneGroup.push(performance.now() - t1);
    }
    oneGroup.sort((a, b) => a - b);
    const s = performance.now();
    const scan = await sql<{ total: unknown }>`select sum(amount_mc) as total from credit_transactions
      where workspace_id = ${WORKSPACE} and type <> 'purchase' and created_at_ms >= ${range.from} and created_at_ms < ${range.to}`.execute(db);
    const ledgerScanMs = performance.now() - s;
    const exact = report.totals.costMillicents === 0 - Number(scan.rows[0]!.total);
    const medianMs = times[Math.floor(times.length / 2)]!;
    return {
      database,
      rows: ROWS,
      rollupRows,
      seedS: +seedS.toFixed(1),
      medianMs: +medianMs.toFixed(1),
      cpuMs: +cpu[Math.floor(cpu.length / 2)]!.toFixed(1),
      p95Ms: +times[Math.min(times.length - 1, Math.ceil(times.length * 0.95) - 1)]!.toFixed(1),
      ledgerScanMs: +ledgerScanMs.toFixed(1),
      oneGroupMs: +oneGroup[Math.floor(oneGroup.length / 2)]!.toFixed(1),
      exact,
      verdict: !exact ? 'FAIL' : medianMs <= GOAL_MS ? 'ok' : 'MISS',
    };
  } finally {
    await handle.close();
  }
}

export async function runCostBench(): Promise<CostBenchCase[]> {
  const out: CostBenchCase[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'was-bench-costs-'));
  try {
    out.push(await measure(`sqlite:${join(dir, 'costs.db')}`, 'sqlite'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  try {
    out.push(await withFreshDatabase(PG_URL, (url) => measure(url, 'postgres')));
  } catch (err) {
    log(`(y) PostgreSQL skipped: ${(err as Error).message}`);
  }
  return out;
}

export function reportCostBench(cases: CostBenchCase[]): void {
  log(`(y) GET /v1/costs, 31 days by day, grouped by operationId, keyId, executionOrigin; goal median <= ${GOAL_MS} ms`);
  log('database  ledger rows  rollup rows  median ms  p95 ms  cpu ms  1 group ms  ledger scan ms  exact  verdict');
  for (const c of cases) {
    log(`${c.database.padEnd(9)} ${String(c.rows).padStart(11)}  ${String(c.rollupRows).padStart(11)}  ${c.medianMs.toFixed(1).padStart(9)}  ${c.p95Ms.toFixed(1).padStart(6)}  ${c.cpuMs.toFixed(1).padStart(6)}  ${c.oneGroupMs.toFixed(1).padStart(10)}  ${c.ledgerScanMs.toFixed(1).padStart(14)}  ${String(c.exact).padEnd(5)}  ${c.verdict}`);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const cases = await runCostBench();
  reportCostBench(cases);
  if (cases.some((c) => c.verdict === 'FAIL')) process.exitCode = 1;
}
