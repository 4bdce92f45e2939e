/**
 * The PostgreSQL expressions of what admission and settlement weigh for a workspace, shared by
 * the statements that read or re-check them (admission-store.ts, admission-batch-store.ts,
 * jobs/finish-batch-store.ts), so every reader computes each figure the same way. Status values
 * are literals where a partial index must match (jobs_active_ws_idx).
 */
import { sql, type RawBuilder } from 'kysely';

/** Waiting (pending) jobs of the workspace. */
export const pendingJobsSql = (workspaceId: string): RawBuilder<number> =>
  sql`(select count(*) from jobs where workspace_id = ${workspaceId} and status = 'pending')`;

/** Credits of allocations live at `now` (see billing/store.ts isLive). */
export const liveCreditsSql = (workspaceId: string, now: number): RawBuilder<number> =>
  sql`(select coalesce(sum(remaining_mc), 0) from credit_allocations where workspace_id = ${workspaceId}
    and (expires_at_ms is null or expires_at_ms > ${now} or expiry_settled_at_ms is not null))`;

/** Credits held by open holds. */
export const heldCreditsSql = (workspaceId: string): RawBuilder<number> =>
  sql`(select coalesce(sum(amount_mc), 0) from credit_holds where workspace_id = ${workspaceId} and released_at_ms is null)`;

/** Whether some allocation with credits left is past its expiry at `now` (expiry must be settled first). */
export const dueCreditsSql = (workspaceId: string, now: number): RawBuilder<boolean> =>
  sql`exists (select 1 from credit_allocations where workspace_id = ${workspaceId} and remaining_mc > 0 and expires_at_ms <= ${now})`;
