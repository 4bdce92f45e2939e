/**
 * Guarded writes on PostgreSQL: a batch that decided from figures read before it took its lock
 * (runs/admission-batch.ts, jobs/finish-batch.ts, worker/job-claim.ts) writes with a statement that
 * re-checks, under the lock, that those figures still allow what it writes, and fails otherwise,
 * so the transaction (and the commit sent in the same pipeline) goes no further. The caller
 * recognises the failure and decides again under the lock.
 */
import { sql, type RawBuilder } from 'kysely';

const MARKER = 'was-guard';

/**
 * An integer expression that is 0 when `condition` holds and raises otherwise. The failure is a
 * cast of a text that depends on `detail` (a runtime value): a constant text would be folded by
 * the planner and fail every time.
 */
export function guardCheck(name: string, condition: RawBuilder<unknown>, detail: RawBuilder<unknown>): RawBuilder<number> {
  return sql<number>`case when ${condition} then 0 else (${`${MARKER}: ${name}: `} || (${detail})::text)::integer end`;
}

/** Whether `err` is a guard of guardCheck failing (the figures changed before the lock). */
export function isGuardFailure(err: unknown): boolean {
  return err instanceof Error && err.message.includes(MARKER);
}
