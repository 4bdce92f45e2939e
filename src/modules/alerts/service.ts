/**
 * Alerts as events (issue 19; docs/decisions.md "Alerts"): budget thresholds, low credits,
 * allocations and keys about to expire, suspended keys and failing webhooks. Each alert is, in one
 * transaction, a capped notification (the operator's list) and an event with the same id (the
 * feed, and a delivery to every webhook subscribed to its type, through the outbox fan-out).
 *
 * "At most once" is the notifications cap, a unique index (kind, subject, day): the insert of an
 * alert that already exists does nothing, and the event is written only by the insert that
 * created the notification, so concurrent processes and repeated checks never double an alert.
 * Money alerts are raised inside the transaction that moves the money (admission's hold, expiry,
 * an operator's debit), so they commit or roll back with it; time alerts come from housekeeping.
 */
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Deps } from '../../deps.js';
import { newId } from '../../lib/ids.js';
import { sumLiveRemaining, sumOpenHolds } from '../billing/store.js';
import { insertEvent } from '../events/store.js';
import { insertNotificationOnce } from '../notifications/store.js';
import {
  allocationExpiringAlert,
  budgetAlert,
  creditsLowAlert,
  EXPIRY_NOTICE_MS,
  isCreditsLow,
  keyExpiringAlert,
  keySuspendedAlert,
  type Alert,
  type BudgetCrossing,
} from './rules.js';
import { findAllocationsToNotice, findKeysToNotice, findLowCreditsThreshold } from './store.js';

type Db = Kysely<Database> | Transaction<Database>;

/**
 * Raises `alert` unless its (type, subject, day) was raised before: a notification, and an event
 * with the same id. Call inside the transaction of the change it reports. True when it was new.
 */
export async function raiseAlert(db: Db, alert: Alert, now: number): Promise<boolean> {
  const id = newId();
  const created = await insertNotificationOnce(db, {
    id,
    workspaceId: alert.workspaceId,
    kind: alert.type,
    subjectId: alert.subject,
    day: alert.day,
    message: alert.message,
    details: alert.data,
    createdAt: now,
  });
  if (created) await insertEvent(db, alert.workspaceId, alert.type, alert.data, now, id);
  return created;
}

/** budget.threshold_crossed for each threshold an admission's hold crossed (reservations/service.ts). */
export async function raiseBudgetAlerts(db: Db, workspaceId: string, crossings: readonly BudgetCrossing[], now: number): Promise<void> {
  for (const c of crossings) await raiseAlert(db, budgetAlert(workspaceId, c, now), now);
}

/**
 * credits.low when `spendableMillicents` (after the change that lowered them) is below the
 * workspace's threshold; at most once per workspace per UTC day. A no-op without a threshold.
 */
export async function raiseCreditsLowIfBelow(db: Db, workspaceId: string, thresholdMillicents: number | null, spendableMillicents: number, now: number): Promise<void> {
  if (thresholdMillicents === null || !isCreditsLow(thresholdMillicents, spendableMillicents)) return;
  await raiseAlert(db, creditsLowAlert(workspaceId, Math.max(0, spendableMillicents), thresholdMillicents, now), now);
}

/**
 * The same after a change whose caller knows neither the threshold nor the balance (an expiry):
 * reads both, inside the caller's transaction (which holds the workspace lock).
 */
export async function checkCreditsLow(db: Db, workspaceId: string, now: number): Promise<void> {
  const threshold = await findLowCreditsThreshold(db, workspaceId);
  if (threshold === null) return;
  const [total, reserved] = await Promise.all([sumLiveRemaining(db, workspaceId, now), sumOpenHolds(db, workspaceId)]);
  await raiseCreditsLowIfBelow(db, workspaceId, threshold, total - reserved, now);
}

/** key.suspended in every workspace of the key, inside the transaction that writes the suspension. */
export async function raiseKeySuspended(db: Db, key: { id: string; workspaceIds: readonly string[] }, until: number, now: number): Promise<void> {
  for (const workspaceId of key.workspaceIds) await raiseAlert(db, keySuspendedAlert(workspaceId, key.id, until, now), now);
}

const NOTICE_BATCH = 200;

/**
 * Housekeeping: allocation.expiring and key.expiring for what expires within the next 7 days and
 * has no alert yet, each alert in a transaction of its own (a concurrent sweep of another
 * process finds the notification there and writes nothing). Returns how many alerts it raised;
 * at most NOTICE_BATCH of each kind per pass, the rest on the next pass.
 */
export async function raiseExpiryNotices(deps: Deps): Promise<number> {
  const now = deps.clock.now();
  const horizon = now + EXPIRY_NOTICE_MS;
  let raised = 0;
  const raise = async (alert: Alert) => {
    if (await deps.db.transaction().execute((trx) => raiseAlert(trx, alert, deps.clock.now()))) raised++;
  };
  for (const a of await findAllocationsToNotice(deps.db, now, horizon, NOTICE_BATCH)) await raise(allocationExpiringAlert(a));
  for (const k of await findKeysToNotice(deps.db, now, horizon, NOTICE_BATCH)) await raise(keyExpiringAlert(k.workspaceId, k.keyId, k.expiresAt));
  return raised;
}
