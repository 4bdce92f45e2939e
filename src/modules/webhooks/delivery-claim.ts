/**
 * Claiming due deliveries with a lease, and recovering leases of crashed workers.
 *
 * A claim is one conditional UPDATE: the due pending rows (oldest due first, at most `max`) become
 * `delivering` with an incremented lease token (fencing) and a lease expiry. On PostgreSQL the
 * candidate rows are taken with FOR UPDATE SKIP LOCKED, so concurrent workers of several
 * processes claim disjoint batches without waiting on each other; on SQLite the statement runs
 * under the single writer. In the same transaction two more reads fetch, for the whole batch,
 * everything an attempt needs at that moment: the events, and the webhooks (url, state, sealed
 * secret) with whether each hostname is verified in the delivery's workspace right now.
 *
 * A `delivering` row whose lease expired (its worker crashed or stalled) goes back to `pending`,
 * due at once, with a new token: it is delivered again, never lost (receivers deduplicate by
 * event id). The lost attempt is not counted (its outcome is unknown).
 */
import { publicWorkspaceId } from '../../lib/livemode.js';
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Deps } from '../../deps.js';
import { claimDue, claimDueSkipLocked, selectEvents, selectWebhookStates } from './delivery-sql.js';

export interface ClaimedDelivery {
  id: string;
  workspaceId: string;
  webhookId: string;
  eventId: string;
  attempts: number;
  replayCount: number;
  leaseToken: number;
  event: { type: string; workspaceId: string; createdAtMs: number; dataJson: string };
  webhook: { url: string; hostname: string; enabled: boolean; revoked: boolean; secretEnc: string };
  /** The webhook's hostname is verified in the delivery's workspace (exact hostname). */
  authorized: boolean;
  /** performance.now() when the webhook state above was read. */
  readAt: number;
}

type Trx = Transaction<Database>;

/**
 * Claims up to `max` due deliveries. `alsoInTransaction` runs first in the same transaction (the
 * worker writes its pending successes there, so one commit serves both).
 */
export async function claimDeliveries(
  deps: Deps,
  owner: string,
  max: number,
  leaseMs: number,
  alsoInTransaction?: (trx: Trx) => Promise<void>,
): Promise<ClaimedDelivery[]> {
  if (max <= 0 && !alsoInTransaction) return [];
  const now = deps.clock.now();
  return deps.db.transaction().execute(async (trx) => {
    if (alsoInTransaction) await alsoInTransaction(trx);
    if (max <= 0) return [];
    const claimed = (await (deps.caps.skipLocked ? claimDueSkipLocked : claimDue)(trx, owner, now + leaseMs, now, max)).rows;
    if (claimed.length === 0) return [];
    // The events (one lookup each) and the batch's few webhooks with their verification state.
    const eventIds = [...new Set(claimed.map((c) => c.event_id))];
    const events = (await selectEvents(eventIds.length)(trx, ...eventIds)).rows;
    const hooks = await readWebhookStates(trx, [...new Set(claimed.map((c) => c.webhook_id))]);
    const readAt = performance.now();
    const eventById = new Map(events.map((e) => [e.id, e]));
    const hookById = new Map(hooks.map((h) => [h.id, h]));
    return claimed.map((c) => {
      const e = eventById.get(c.event_id)!;
      const w = hookById.get(c.webhook_id)!;
      return {
        id: c.id,
        workspaceId: c.workspace_id,
        webhookId: c.webhook_id,
        eventId: c.event_id,
        attempts: Number(c.attempts),
        replayCount: Number(c.replay_count),
        leaseToken: Number(c.lease_token),
        event: { type: e.type, workspaceId: e.workspace_id, createdAtMs: Number(e.created_at_ms), dataJson: e.data_json },
        ...webhookState(w, c.workspace_id),
        readAt,
      };
    });
  });
}

type Db = Kysely<Database> | Transaction<Database>;

/** Webhooks with the workspace in which their hostname is verified now (if any). */
async function readWebhookStates(db: Db, ids: string[]) {
  return (await selectWebhookStates(ids.length)(db, ...ids)).rows;
}

function webhookState(w: Awaited<ReturnType<typeof readWebhookStates>>[number], workspaceId: string): Pick<ClaimedDelivery, 'webhook' | 'authorized'> {
  return {
    webhook: { url: w.url, hostname: w.hostname, enabled: Number(w.enabled) === 1, revoked: w.revoked_at_ms !== null, secretEnc: w.secret_enc },
    // The delivery and its webhook must be of the same workspace, and the hostname verified in it:
    // domains are the live workspace's, and verify its test twin's webhooks too (lib/livemode.ts).
    authorized: w.workspace_id === workspaceId && w.verified_workspace_id === publicWorkspaceId(workspaceId),
  };
}

/**
 * Reads a claimed delivery's webhook state again (it waited in a worker's local queue longer
 * than a moment, e.g. behind slow destinations), so the checks of its attempt are current.
 */
export async function refreshWebhookState(deps: Deps, d: ClaimedDelivery): Promise<ClaimedDelivery> {
  const [w] = await readWebhookStates(deps.db, [d.webhookId]);
  if (!w) return { ...d, authorized: false, readAt: performance.now() };
  return { ...d, ...webhookState(w, d.workspaceId), readAt: performance.now() };
}

/** Returns deliveries whose lease expired to the queue, due now; returns how many. */
export async function recoverExpiredDeliveries(deps: Deps): Promise<number> {
  const now = deps.clock.now();
  const rows = await deps.db
    .updateTable('webhook_deliveries')
    .set((eb) => ({
      status: 'pending',
      lease_token: eb('lease_token', '+', 1),
      lease_owner: null,
      lease_expires_at_ms: null,
      next_attempt_at_ms: now,
      updated_at_ms: now,
    }))
    .where('status', '=', 'delivering')
    .where('lease_expires_at_ms', '<', now)
    .returning(['id', 'webhook_id', 'workspace_id'])
    .execute();
  for (const r of rows) deps.log.warn({ deliveryId: r.id, webhookId: r.webhook_id, workspaceId: r.workspace_id }, 'delivery lease expired; delivery returned to the queue');
  return rows.length;
}

/** Gives a claimed delivery back (worker shutting down) so another worker may send it at once. */
export async function releaseDelivery(deps: Deps, id: string, leaseToken: number): Promise<void> {
  const now = deps.clock.now();
  await deps.db
    .updateTable('webhook_deliveries')
    .set((eb) => ({ status: 'pending', lease_token: eb('lease_token', '+', 1), lease_owner: null, lease_expires_at_ms: null, next_attempt_at_ms: now, updated_at_ms: now }))
    .where('id', '=', id)
    .where('status', '=', 'delivering')
    .where('lease_token', '=', leaseToken)
    .execute();
}
