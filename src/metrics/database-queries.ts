/**
 * The database-derived gauges of /metrics, read when it is scraped: waiting and running jobs and
 * the oldest waiting job per operation, the webhook delivery backlog, the credits held by open
 * reservations and housekeeping's lag. Each is one small query on a partial or plain index, the
 * same Kysely query on SQLite and PostgreSQL. They describe the whole database, so with several
 * processes on PostgreSQL every process reports the same (global) values.
 */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/schema.js';

export interface JobQueueRow {
  operation: string;
  waiting: number;
  running: number;
  /** Earliest run_after_ms of the operation's waiting jobs (when the oldest became claimable); null without any. */
  oldestWaitingSince: number | null;
}

export interface DatabaseGauges {
  jobs: JobQueueRow[];
  deliveries: { pending: number; delivering: number; oldestDueSince: number | null };
  holds: { open: number; reservedMillicents: number };
  /** The oldest item each housekeeping task should already have handled (epoch ms), null when none is overdue. */
  housekeeping: { creditExpiry: number | null; idempotencyPurge: number | null };
}

const num = (v: unknown): number => (v === null || v === undefined ? 0 : Number(v));
const orNull = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

/** One read of every database-derived gauge at `now`. */
export async function readDatabaseGauges(db: Kysely<Database>, now: number): Promise<DatabaseGauges> {
  // Statuses as literals: partial indexes (jobs_active_ws_idx, webhook_deliveries_due_idx,
  // webhook_deliveries_leased_idx, credit_holds_open_idx) only serve a query that names the value.
  const jobs = await db
    .selectFrom('jobs')
    .select((eb) => [
      'operation_id',
      'status',
      eb.fn.countAll<number>().as('n'),
      eb.fn.min<number>('run_after_ms').as('oldest'),
    ])
    .where(sql<boolean>`status in ('pending', 'processing')`)
    .groupBy(['operation_id', 'status'])
    .execute();
  const pending = await db
    .selectFrom('webhook_deliveries')
    .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.min<number>('next_attempt_at_ms').as('oldest')])
    .where('status', '=', sql.lit('pending'))
    .executeTakeFirst();
  const delivering = await db
    .selectFrom('webhook_deliveries')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('status', '=', sql.lit('delivering'))
    .executeTakeFirst();
  const holds = await db
    .selectFrom('credit_holds')
    .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.sum<number>('amount_mc').as('total')])
    .where('released_at_ms', 'is', null)
    .executeTakeFirst();
  // Housekeeping's work lists (worker/maintenance.ts): due allocations whose expiry is not settled
  // (billing/expiry-store.ts), idempotency records past their expiry.
  const expiry = await db
    .selectFrom('credit_allocations')
    .select((eb) => eb.fn.min<number>('expires_at_ms').as('oldest'))
    .where('expires_at_ms', 'is not', null)
    .where('expires_at_ms', '<=', now)
    .where(sql<boolean>`remaining_mc > 0`)
    .where('expiry_settled_at_ms', 'is', null)
    .executeTakeFirst();
  const idempotency = await db
    .selectFrom('idempotency_keys')
    .select((eb) => eb.fn.min<number>('expires_at_ms').as('oldest'))
    .where('expires_at_ms', '<=', now)
    .executeTakeFirst();

  const byOperation = new Map<string, JobQueueRow>();
  for (const r of jobs) {
    let row = byOperation.get(r.operation_id);
    if (!row) byOperation.set(r.operation_id, (row = { operation: r.operation_id, waiting: 0, running: 0, oldestWaitingSince: null }));
    if (r.status === 'pending') {
      row.waiting = num(r.n);
      row.oldestWaitingSince = orNull(r.oldest);
    } else {
      row.running = num(r.n);
    }
  }
  return {
    jobs: [...byOperation.values()],
    deliveries: { pending: num(pending?.n), delivering: num(delivering?.n), oldestDueSince: orNull(pending?.oldest) },
    holds: { open: num(holds?.n), reservedMillicents: num(holds?.total) },
    housekeeping: { creditExpiry: orNull(expiry?.oldest), idempotencyPurge: orNull(idempotency?.oldest) },
  };
}
