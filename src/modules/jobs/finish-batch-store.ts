/**
 * SQL of batched job finishes on PostgreSQL (finish-batch.ts): one statement reads what the
 * finishes need (the jobs, their open holds, the allocations, the webhooks), and one statement,
 * under the workspace lock, applies every finish and writes the settlement, versions, media
 * rows, events and webhook deliveries of the whole batch, re-checking what it was decided from.
 */
import { sql, type CompiledQuery, type Insertable, type Kysely } from 'kysely';
import { guardCheck } from '../../db/guard.js';
import { dueCreditsSql } from '../runs/figures-sql.js';
import { insertJsonRows, rowsJson } from '../../db/json-rows.js';
import type { Database, Row, WebhookDeliveriesTable } from '../../db/schema.js';
import { JOB_CHANGES_CHANNEL } from './changes.js';
import { VERSION_COLUMNS, type JobRow } from './store.js';
import { FINISH_COLUMN_TYPES, type FinishFields } from './finish-rules.js';
import { MEDIA_COLUMNS } from '../media/store.js';
import { addRollupRowsSql, rollupRowsOf } from '../costs/rollup.js';
import { LEDGER_COLUMNS, type ledgerRow } from '../billing/store.js';

type Db = Kysely<Database>;

/** One finish as the update applies it. */
export interface FinishPatch {
  id: string;
  lease_token: number;
  /** The job's version as read: the update applies only to that row. */
  expected_version: number;
  /** The columns to set, as finishFields (finish-rules.ts) gives them for the one-by-one path: a column it leaves out keeps its value. */
  fields: FinishFields;
  /** The cost charged with this finish (whole millicents, at most the open hold). */
  charge: number;
}

/** `column = the patch's value` for every column finishFields may set, where the patch has it. */
const FINISH_SET = sql.join(
  Object.entries(FINISH_COLUMN_TYPES).map(([column, type]) => sql`${sql.ref(column)} = case when v.fields ? ${column} then (v.fields ->> ${column})::${sql.raw(type)} else j.${sql.ref(column)} end`),
);

export interface FinishRead {
  /** The batch's jobs of this workspace, as they are now. */
  jobs: JobRow[];
  holds: { job_id: string; id: string; amount_mc: number; created_at_ms: number }[];
  /** The workspace's allocations with credits left. */
  allocations: { id: string; remaining: number; expiresAt: number | null }[];
  dueAllocations: boolean;
  hooks: { id: string; event_types_json: string }[];
}

interface ReadRow {
  jobs: JobRow[];
  holds: FinishRead['holds'];
  allocations: FinishRead['allocations'];
  due: boolean;
  hooks: FinishRead['hooks'];
}

/** Reads what finishing `jobIds` needs: the jobs, their open holds, the allocations, webhooks. */
export function finishFiguresQuery(db: Db, workspaceId: string, jobIds: string[], now: number): CompiledQuery {
  // `= any(array)`: an index lookup per id (a set-returning function here was estimated at 100
  // rows and the planner scanned every job of the workspace instead).
  return sql<ReadRow>`
    select
      (select coalesce(json_agg(j), '[]'::json) from jobs j
        where j.id = any(${jobIds}::text[]) and j.workspace_id = ${workspaceId}) as jobs,
      (select coalesce(json_agg(json_build_object('job_id', job_id, 'id', id, 'amount_mc', amount_mc, 'created_at_ms', created_at_ms)), '[]'::json)
        from credit_holds where job_id = any(${jobIds}::text[]) and released_at_ms is null) as holds,
      (select coalesce(json_agg(json_build_object('id', id, 'remaining', remaining_mc, 'expiresAt', expires_at_ms)), '[]'::json)
        from credit_allocations where workspace_id = ${workspaceId} and remaining_mc > 0) as allocations,
      ${dueCreditsSql(workspaceId, now)} as due,
      (select coalesce(json_agg(json_build_object('id', id, 'event_types_json', event_types_json)), '[]'::json)
        from webhooks where workspace_id = ${workspaceId} and revoked_at_ms is null and enabled = 1) as hooks`.compile(db);
}

export function parseFinishRead(rows: unknown[]): FinishRead {
  const r = rows[0] as ReadRow;
  return {
    jobs: r.jobs,
    holds: r.holds.map((h) => ({ ...h, amount_mc: Number(h.amount_mc), created_at_ms: Number(h.created_at_ms) })),
    allocations: r.allocations.map((a) => ({ id: a.id, remaining: Number(a.remaining), expiresAt: a.expiresAt === null ? null : Number(a.expiresAt) })),
    dueAllocations: r.due,
    hooks: r.hooks,
  };
}

export interface FinishWrites {
  patches: FinishPatch[];
  debits: { id: string; amount: number }[];
  releasedHolds: string[];
  /** Usage entries (billing/store.ts ledgerRow): the adjustment columns (reason, provenance) stay null. */
  ledger: ReturnType<typeof ledgerRow>[];
  versions: Row<'job_versions'>[];
  media: Row<'media'>[];
  events: { id: string; workspace_id: string; type: string; data_json: string; created_at_ms: number }[];
  deliveries: Insertable<WebhookDeliveriesTable>[];
  notify: string[];
}

const EVENT_COLUMNS = ['id', 'workspace_id', 'type', 'data_json', 'created_at_ms'];
const DELIVERY_COLUMNS = ['id', 'workspace_id', 'webhook_id', 'event_id', 'status', 'attempts', 'replay_count', 'next_attempt_at_ms', 'lease_token', 'created_at_ms', 'updated_at_ms'];

/**
 * The records of a batch's finishes that no other writer can collide with and that change no
 * figure admission weighs: ledger entries, media rows, events and their webhook deliveries, all
 * under new ids. Sent before the workspace lock, in the same transaction as
 * writeFinishMoneyQuery, so the lock is held only for the rest; if that statement's guard fails,
 * these roll back with it. (A version is keyed by job and number, which a cancel racing the
 * finish also writes: inserted before the lock, the two inserts deadlocked on the unique index,
 * each waiting for the other's transaction while one of them waited for the lock.)
 */
export function writeFinishRecordsQuery(db: Db, w: FinishWrites): CompiledQuery {
  return sql`
    with l as (${insertJsonRows('credit_transactions', LEDGER_COLUMNS, rowsJson(w.ledger, LEDGER_COLUMNS))}),
      m as (${insertJsonRows('media', MEDIA_COLUMNS, rowsJson(w.media, MEDIA_COLUMNS))}),
      e as (${insertJsonRows('events', EVENT_COLUMNS, rowsJson(w.events, EVENT_COLUMNS))}),
      d as (${insertJsonRows('webhook_deliveries', DELIVERY_COLUMNS, rowsJson(w.deliveries, DELIVERY_COLUMNS))})
    select 1 as written`.compile(db);
}

/**
 * Applies a batch's finishes under the workspace lock: the jobs' status, result and cost with
 * their new versions, the allocations' debits and the holds' release, in one statement, which fails (guard.ts) unless
 * every finish applies to the job row as read (same version, still processing under the lease),
 * every debit finds its credits and every hold is still open: then all that was decided from the
 * rows read before the lock still holds. The ledger entries' cost rollup (modules/costs) is
 * written here too, under the lock: an upsert of a shared rollup row before it could wait for a
 * transaction that holds the lock. Returns the updated rows.
 */
export function writeFinishMoneyQuery(db: Db, workspaceId: string, w: FinishWrites, now: number): CompiledQuery {
  const checked = guardCheck(
    'finish rows changed',
    sql`(select count(*) from u) = ${w.patches.length} and (select count(*) from a) = ${w.debits.length} and (select count(*) from r) = ${w.releasedHolds.length}`,
    sql`(select count(*) from u)`,
  );
  return sql<{ checked: number; jobs: JobRow[] }>`
    with v as (
      select * from json_to_recordset(${JSON.stringify(w.patches)}::json) as v(id text, lease_token bigint, expected_version integer, fields jsonb, charge bigint)
    ), u as (
      update jobs j set
        ${FINISH_SET},
        updated_at_ms = ${now},
        version = j.version + 1,
        cost_mc = j.cost_mc + v.charge
      from v
      where j.id = v.id and j.workspace_id = ${workspaceId} and j.status = 'processing' and j.lease_token = v.lease_token
        and j.version = v.expected_version
      returning j.*
    ), a as (
      update credit_allocations c set remaining_mc = c.remaining_mc - d.amount
      from json_to_recordset(${JSON.stringify(w.debits)}::json) as d(id text, amount bigint)
      where c.id = d.id and c.remaining_mc >= d.amount
      returning c.id
    ), r as (
      update credit_holds set released_at_ms = ${now}
      where id = any(${w.releasedHolds}::text[]) and released_at_ms is null
      returning id
    ), ver as (${insertJsonRows('job_versions', VERSION_COLUMNS, rowsJson(w.versions, VERSION_COLUMNS))}),
    cr as (${addRollupRowsSql(JSON.stringify(rollupRowsOf(w.ledger)))})
    select ${checked} as checked,
      (select coalesce(json_agg(u), '[]'::json) from u) as jobs,
      -- count() evaluates pg_notify once per job: the notifications go out at commit.
      (select count(pg_notify(${JOB_CHANGES_CHANNEL}, n)) from json_array_elements_text(${JSON.stringify(w.notify)}::json) as n) as notified`.compile(db);
}

export function parseWrittenJobs(rows: unknown[]): JobRow[] {
  return (rows[0] as { jobs: JobRow[] }).jobs;
}
