/**
 * SQL of batched admission on PostgreSQL (admission-batch.ts): one statement reads every figure
 * the batch weighs plus the stored Idempotency-Keys it names, and one statement writes the jobs,
 * holds, first versions and stored responses of all admitted runs (and notifies their job-change
 * feed). The queries are compiled here and sent by the batch's transaction
 * (db/batch-transaction.ts) in two round trips whatever the batch's size: the read, then the
 * workspace lock, the guarded write and the commit (or, after a guard failed: lock and read, then
 * write and commit).
 */
import { sql, type CompiledQuery, type Kysely } from 'kysely';
import { guardCheck } from '../../db/guard.js';
import { dueCreditsSql, heldCreditsSql, liveCreditsSql, pendingJobsSql } from './figures-sql.js';
import { creditsLowRaisedSql } from '../alerts/store.js';
import { insertJsonRows, rowsJson } from '../../db/json-rows.js';
import type { Database, Row } from '../../db/schema.js';
import { JOB_CHANGES_CHANNEL } from '../jobs/changes.js';
import { JOB_COLUMNS, VERSION_COLUMNS, type JobRow } from '../jobs/store.js';
import { HOLD_COLUMNS } from '../reservations/store.js';
import { IDEMPOTENCY_COLUMNS } from '../idempotency/service.js';

type Db = Kysely<Database>;

export interface StoredIdempotency {
  keyId: string;
  idemKey: string;
  hash: string;
  state: string;
  statusCode: number | null;
  response: string | null;
  expiresAt: number;
}

export interface BatchFigures {
  waitingJobs: number;
  /** Providers (of those asked about) the workspace holds its own key for. */
  ownProviders: Set<string>;
  dueAllocations: boolean;
  liveMillicents: number;
  heldMillicents: number;
  /** Whether the workspace's credits.low of the day asked about exists (false when not asked). */
  creditsLowRaised: boolean;
  /** Stored Idempotency-Keys among those asked about. */
  idempotency: StoredIdempotency[];
}

interface FiguresRow {
  pending: string | number;
  providers: string[];
  due: boolean;
  live: string | number;
  held: string | number;
  low_raised: boolean;
  idempotency: StoredIdempotency[];
}

/**
 * Reads the batch's figures: before the workspace lock (then the write re-checks them) or after it.
 * `creditsLowDay`: the UTC day whose credits.low to look for (workspaces with a low-credits
 * threshold only; modules/alerts).
 */
export function batchFiguresQuery(
  db: Db,
  workspaceId: string,
  providers: string[],
  keys: { keyId: string; idemKey: string }[],
  now: number,
  creditsLowDay: string | null = null,
): CompiledQuery {
  return sql<FiguresRow>`
    select
      ${pendingJobsSql(workspaceId)} as pending,
      (select coalesce(json_agg(distinct provider), '[]'::json) from provider_keys
        where workspace_id = ${workspaceId} and provider = any(${providers}::text[])) as providers,
      ${dueCreditsSql(workspaceId, now)} as due,
      ${liveCreditsSql(workspaceId, now)} as live,
      ${heldCreditsSql(workspaceId)} as held,
      ${creditsLowDay === null ? sql`false` : creditsLowRaisedSql(workspaceId, creditsLowDay)} as low_raised,
      (select coalesce(json_agg(json_build_object('keyId', key_id, 'idemKey', idem_key, 'hash', request_hash, 'state', state,
          'statusCode', status_code, 'response', response_json, 'expiresAt', expires_at_ms)), '[]'::json)
        from idempotency_keys where workspace_id = ${workspaceId}
          and (key_id, idem_key) in (select * from unnest(${keys.map((k) => k.keyId)}::text[], ${keys.map((k) => k.idemKey)}::text[]))) as idempotency`.compile(db);
}

export function parseBatchFigures(rows: unknown[]): BatchFigures {
  const r = rows[0] as FiguresRow;
  return {
    waitingJobs: Number(r.pending),
    ownProviders: new Set(r.providers),
    dueAllocations: r.due,
    liveMillicents: Number(r.live),
    heldMillicents: Number(r.held),
    creditsLowRaised: r.low_raised,
    idempotency: r.idempotency.map((i) => ({ ...i, statusCode: i.statusCode === null ? null : Number(i.statusCode), expiresAt: Number(i.expiresAt) })),
  };
}

export interface AdmissionWrites {
  jobs: JobRow[];
  holds: Row<'credit_holds'>[];
  versions: Row<'job_versions'>[];
  idempotency: Row<'idempotency_keys'>[];
  /** Jobs whose job-change feed is notified at commit (PostgreSQL NOTIFY). */
  notify: string[];
}


/** Figures read before the lock (or left by the previous batch) that the write re-checks under it. */
export interface AdmissionGuard {
  /** Live minus held credits as read: admitting what was decided needs at least as much now. */
  spendableMillicents: number;
  /** Pending jobs as read: capacity decisions need no more now. */
  waitingJobs: number;
  /** The providers the batch's operations use, sorted, and those the workspace had its own key for. */
  providers: string[];
  ownProviders: string[];
}

/**
 * Writes every admitted run of a batch in one statement, under the workspace lock, and returns
 * the figures it saw before its own rows (spendable credits and waiting jobs: parseWrittenFigures).
 * With a guard, the statement fails unless spendable credits did not shrink and waiting jobs did
 * not grow since the figures were read, no credits came due, and the workspace's own provider
 * keys are the same: then every decision made from the older figures still holds.
 */
export function writeAdmissionsQuery(db: Db, w: AdmissionWrites, at: { workspaceId: string; now: number }, guard?: AdmissionGuard): CompiledQuery {
  const ws = at.workspaceId;
  const checked = guard
    ? guardCheck(
        'admission figures changed',
        sql`${liveCreditsSql(ws, at.now)} - ${heldCreditsSql(ws)} >= ${guard.spendableMillicents}
          and ${pendingJobsSql(ws)} <= ${guard.waitingJobs}
          and not ${dueCreditsSql(ws, at.now)}
          and (select coalesce(array_agg(distinct provider order by provider), '{}') from provider_keys
            where workspace_id = ${ws} and provider = any(${guard.providers}::text[]))
            = (select coalesce(array_agg(p order by p), '{}') from unnest(${guard.ownProviders}::text[]) as p)`,
        pendingJobsSql(ws),
      )
    : sql`0`;
  return sql`
    with j as (${insertJsonRows('jobs', JOB_COLUMNS, rowsJson(w.jobs, JOB_COLUMNS))}),
      h as (${insertJsonRows('credit_holds', HOLD_COLUMNS, rowsJson(w.holds, HOLD_COLUMNS))}),
      v as (${insertJsonRows('job_versions', VERSION_COLUMNS, rowsJson(w.versions, VERSION_COLUMNS))}),
      i as (${insertJsonRows('idempotency_keys', IDEMPOTENCY_COLUMNS, rowsJson(w.idempotency, IDEMPOTENCY_COLUMNS))})
    select ${checked} as checked,
      -- The statement's snapshot: after the lock, before its own rows.
      ${liveCreditsSql(ws, at.now)} - ${heldCreditsSql(ws)} as spendable,
      ${pendingJobsSql(ws)} as waiting,
      (select count(pg_notify(${JOB_CHANGES_CHANNEL}, n)) from json_array_elements_text(${JSON.stringify(w.notify)}::json) as n) as notified`.compile(db);
}

export function parseWrittenFigures(rows: unknown[]): { spendableMillicents: number; waitingJobs: number } {
  const r = rows[0] as { spendable: string | number; waiting: string | number };
  return { spendableMillicents: Number(r.spendable), waitingJobs: Number(r.waiting) };
}
